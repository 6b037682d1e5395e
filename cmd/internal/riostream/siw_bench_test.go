package riostream

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkSIWRiostream is BenchmarkRiostream on Soft-iWARP: our
// riostream pair against rdma-core's in ABBA order, processes copied to
// tmpfs, the server on siw0 and the client on siw1 in the peer
// namespace; ms per test (the client's own time), medians, and
// ours/rdma-core's (lower is better).
//
//	go run ./test/vm test -kernels 6.12 -unit=false -race none -wire=false -scale= -- -test.run XXX -test.bench SIWRiostream -test.benchtime 1x
func BenchmarkSIWRiostream(b *testing.B) {
	e, dev := cmtest.SIW(b)
	o, r := cmtest.Binaries(b, "riostream")
	const rounds = 4
	for _, c := range []struct {
		name         string
		size, xfers  int
		count, iters string
	}{
		{"lat/size=64", 64, 2 * 100, "1", "100"},
		{"bw/size=4096", 4096, 2 * 500, "500", "1"},
		{"bw/size=65536", 65536, 2 * 100, "100", "1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			run := func(s cmtest.Side) float64 {
				_, rc := pairOn(b, e.Addr, dev, s, s.InNetns(e.PeerNetns), "-S", strconv.Itoa(c.size), "-C", c.count, "-I", c.iters)
				rows := table(b, rc.Stdout)
				last := strings.Split(strings.TrimSpace(rc.Stdout), "\n")[len(rows)]
				us, err := strconv.ParseFloat(last[strings.LastIndexByte(last, ' ')+1:], 64)
				if err != nil || us <= 0 {
					b.Fatalf("client's table %q: %v", rc.Stdout, err)
				}
				return us * float64(c.xfers) / 1000
			}
			for range b.N {
				run(r) // warm-up
				var ours, theirs []float64
				for i := range rounds {
					if i%4 == 1 || i%4 == 2 {
						theirs = append(theirs, run(r))
						ours = append(ours, run(o))
					} else {
						ours = append(ours, run(o))
						theirs = append(theirs, run(r))
					}
				}
				mo, mt := cmtest.Median(ours), cmtest.Median(theirs)
				b.ReportMetric(mo, "ms-ours")
				b.ReportMetric(mt, "ms-rdmacore")
				b.ReportMetric(mo/mt, "ratio-ours/rdmacore")
			}
		})
	}
}
