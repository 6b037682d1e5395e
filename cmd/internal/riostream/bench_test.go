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
	a, dev := cmtest.RxeAddr(b) // fails outside the VM
	benchRiostream(b, []benchCase{
		{"lat/size=64", 64, 2 * 300, "1", "300"},
		{"bw/size=64", 64, 2 * 3000, "3000", "1"},
		{"bw/size=4096", 4096, 2 * 1000, "1000", "1"},
		{"bw/size=65536", 65536, 2 * 200, "200", "1"},
	}, func(b testing.TB, s cmtest.Side, args ...string) cmtest.Result {
		_, rc := pairOn(b, a, dev, s, s, args...)
		return rc
	})
}

// benchCase is one custom test of a riostream benchmark: the message
// size, the transfers the client's usec/xfer counts, and -C and -I.
type benchCase struct {
	name         string
	size, xfers  int
	count, iters string
}

// benchRiostream runs each case with our pair and rdma-core's, 4 ABBA
// rounds after a warm-up; run runs one pair of side s and returns the
// client's result.
func benchRiostream(b *testing.B, cases []benchCase, run func(b testing.TB, s cmtest.Side, args ...string) cmtest.Result) {
	o, r := cmtest.Binaries(b, "riostream")
	const rounds = 4
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ms := func(s cmtest.Side) float64 {
				rc := run(b, s, "-S", strconv.Itoa(c.size), "-C", c.count, "-I", c.iters)
				rows := table(b, rc.Stdout)
				last := strings.Split(strings.TrimSpace(rc.Stdout), "\n")[len(rows)]
				us, err := strconv.ParseFloat(last[strings.LastIndexByte(last, ' ')+1:], 64)
				if err != nil || us <= 0 {
					b.Fatalf("client's table %q: %v", rc.Stdout, err)
				}
				return us * float64(c.xfers) / 1000
			}
			for range b.N {
				mo, mt := cmtest.ABBAMedians(rounds, o, r, ms)
				b.ReportMetric(mo, "ms-ours")
				b.ReportMetric(mt, "ms-rdmacore")
				b.ReportMetric(mo/mt, "ratio-ours/rdmacore")
			}
		})
	}
}
