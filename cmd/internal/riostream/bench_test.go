package riostream

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkRiostream times our riostream pair against rdma-core's on
// the rxe device, in ABBA order, both processes copied to tmpfs
// (cmtest.Binaries). Each run is one custom test; its time is the
// client's own (usec/xfer times the transfers), so that connection
// setup does not count. The figures are the medians of the rounds in
// ms per test (lower is better) and ours/rdma-core's.
//
//	go run ./test/vm -kernels 6.12 test -unit=false -devices 1 -scale= -race none -- -test.run XXX -test.bench Riostream -test.benchtime 1x
func BenchmarkRiostream(b *testing.B) {
	cmtest.RxeAddr(b) // fails outside the VM
	o, r := cmtest.Binaries(b, "riostream")
	const rounds = 4
	for _, c := range []struct {
		name         string
		size, xfers  int
		count, iters string
	}{
		{"lat/size=64", 64, 2 * 300, "1", "300"},
		{"bw/size=64", 64, 2 * 3000, "3000", "1"},
		{"bw/size=4096", 4096, 2 * 1000, "1000", "1"},
		{"bw/size=65536", 65536, 2 * 200, "200", "1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			run := func(s cmtest.Side) float64 {
				_, rc := pair(b, s, s, "-S", strconv.Itoa(c.size), "-C", c.count, "-I", c.iters)
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
