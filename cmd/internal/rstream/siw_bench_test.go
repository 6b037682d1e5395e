package rstream

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkSIWRstream is BenchmarkRstream on Soft-iWARP, where rsockets
// send each message's word with a SEND (RS_OPT_MSG_SEND): our rstream
// pair against rdma-core's in ABBA order, processes copied to tmpfs, the
// server on siw0 and the client on siw1 in the peer namespace. The
// figure is MB/s from the client's usec/xfer, median of the rounds.
//
//	go run ./test/vm test -kernels 6.12 -unit=false -race none -wire=false -scale= -- -test.run XXX -test.bench SIWRstream -test.benchtime 1x
func BenchmarkSIWRstream(b *testing.B) {
	e, dev := cmtest.SIW(b)
	m := siwMode(e, dev)
	o, r := cmtest.Binaries(b, "rstream")
	const rounds = 4
	for _, c := range []struct{ size, count int }{{64, 5000}, {4096, 2000}, {65536, 300}} {
		b.Run("size="+strconv.Itoa(c.size), func(b *testing.B) {
			args := []string{"-S", strconv.Itoa(c.size), "-C", strconv.Itoa(c.count)}
			mbps := func(s cmtest.Side) float64 {
				_, rc := pair(b, m, s, s.InNetns(e.PeerNetns), args...)
				rows := strings.Split(strings.TrimSpace(rc.Stdout), "\n")
				f := strings.Fields(rows[len(rows)-1])
				us, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil || len(f) != 8 || us <= 0 {
					b.Fatalf("client's table %q: %v", rc.Stdout, err)
				}
				return float64(c.size) / us
			}
			for range b.N {
				mo, mt := cmtest.ABBAMedians(rounds, o, r, mbps)
				b.ReportMetric(mo, "MBps-ours")
				b.ReportMetric(mt, "MBps-rdmacore")
				b.ReportMetric(mo/mt, "ratio-ours/rdmacore")
			}
		})
	}
}
