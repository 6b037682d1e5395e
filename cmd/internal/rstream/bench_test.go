package rstream

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkRstream compares throughput over rsockets on the rxe device:
// our rstream pair against rdma-core's, alternating in ABBA order, and,
// for reference, rdma-core's pair over the kernel's TCP (-T s) on the
// same address (a local one, so TCP goes through loopback as the RoCE
// packets loop inside the rxe device). Both are processes copied to
// tmpfs. Each run is one custom transfer (-S size -C count); the figure
// is MB/s from the client's usec/xfer (its Gb/sec column has two
// decimals, too few for small messages under TCG), median of the rounds.
//
//	go run ./test/vm test -unit=false -devices 1 -scale= -- -test.run XXX -test.bench Rstream -test.benchtime 1x
func BenchmarkRstream(b *testing.B) {
	cmtest.RxeAddr(b) // fails outside the VM
	o, r := cmtest.Binaries(b, "rstream")
	tcp := rdmaMode
	tcp.flags = []string{"-T", "s"}
	tcp.wait = tcpMode.wait
	const rounds = 6
	for _, c := range []struct{ size, count int }{{64, 20000}, {4096, 5000}, {65536, 1000}} {
		b.Run("size="+strconv.Itoa(c.size), func(b *testing.B) {
			args := []string{"-S", strconv.Itoa(c.size), "-C", strconv.Itoa(c.count)}
			mbps := func(m mode, s cmtest.Side) float64 {
				_, rc := pair(b, m, s, s, args...)
				rows := strings.Split(strings.TrimSpace(rc.Stdout), "\n")
				f := strings.Fields(rows[len(rows)-1])
				us, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil || len(f) != 8 || us <= 0 {
					b.Fatalf("client's table %q: %v", rc.Stdout, err)
				}
				return float64(c.size) / us
			}
			for range b.N {
				mbps(rdmaMode, r) // warm-up
				var ours, theirs, kernel []float64
				for i := range rounds {
					if i%4 == 1 || i%4 == 2 {
						theirs = append(theirs, mbps(rdmaMode, r))
						ours = append(ours, mbps(rdmaMode, o))
					} else {
						ours = append(ours, mbps(rdmaMode, o))
						theirs = append(theirs, mbps(rdmaMode, r))
					}
					kernel = append(kernel, mbps(tcp, r))
				}
				mo, mt, mk := cmtest.Median(ours), cmtest.Median(theirs), cmtest.Median(kernel)
				b.ReportMetric(mo, "MBps-ours")
				b.ReportMetric(mt, "MBps-rdmacore")
				b.ReportMetric(mk, "MBps-tcp")
				b.ReportMetric(mo/mt, "ratio-ours/rdmacore")
				b.ReportMetric(mo/mk, "ratio-ours/tcp")
			}
		})
	}
}

// BenchmarkRstreamSetup times rstream runs that are mostly connection
// setup: one 64-byte transfer each way (-S 64 -C 1), so that a run is a
// process's start, its rsocket's connect or accept, one round trip and
// the close. Our pair against rdma-core's and each of ours with
// rdma-core's other side, processes from tmpfs, 8 ABBA rounds after a
// warm-up, with each pair's context switches and CPU per run (rusage).
// rdma/rsocket's BenchmarkDialAccept is the library's own figure.
//
//	go run ./test/vm test -unit=false -race none -wire=false -scale '' -devices 2 -- -test.run XXX -test.bench RstreamSetup -test.benchtime 1x
func BenchmarkRstreamSetup(b *testing.B) {
	addr, dev := cmtest.RxeAddr(b)
	ours, theirs := cmtest.Binaries(b, "rstream")
	for range b.N {
		cmtest.BindConnect{Dev: dev, Addr: addr, Args: []string{"-S", "64", "-C", "1"}, Per: 1, Unit: "run"}.Run(b, ours, theirs)
	}
}
