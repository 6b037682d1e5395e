package riostream

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkRiostream times our riostream against rdma-core's on the
// rxe device (cmtest.ABBA: both pairs and the mixed ones, in ABBA
// order, processes copied to tmpfs). Each run is one custom test; its
// time is the client's own (usec/xfer times the transfers), so that
// connection setup does not count. ms-ours/ms-rdmacore is the time per
// test, lower is better.
//
//	go run ./test/vm test -unit=false -devices 1 -scale= -race none -- -test.run XXX -test.bench Riostream -test.benchtime 1x
func BenchmarkRiostream(b *testing.B) {
	cmtest.RxeAddr(b) // fails outside the VM
	o, r := cmtest.Binaries(b, "riostream")
	for _, c := range []struct {
		name         string
		size, xfers  int
		count, iters string
	}{
		{"lat/size=64", 64, 2 * 2000, "1", "2000"},
		{"bw/size=64", 64, 2 * 10000, "10000", "1"},
		{"bw/size=4096", 4096, 2 * 5000, "5000", "1"},
		{"bw/size=65536", 65536, 2 * 1000, "1000", "1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				cmtest.ABBA(b, 4, o, r, func(server, client cmtest.Side) time.Duration {
					_, rc := pair(b, server, client, "-S", strconv.Itoa(c.size), "-C", c.count, "-I", c.iters)
					rows := table(b, rc.Stdout)
					last := strings.Split(strings.TrimSpace(rc.Stdout), "\n")[len(rows)]
					us, err := strconv.ParseFloat(last[strings.LastIndexByte(last, ' ')+1:], 64)
					if err != nil || us <= 0 {
						b.Fatalf("client's table %q: %v", rc.Stdout, err)
					}
					return time.Duration(us * float64(c.xfers) * float64(time.Microsecond))
				})
			}
		})
	}
}
