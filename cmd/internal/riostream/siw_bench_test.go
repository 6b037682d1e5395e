package riostream

import (
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
	benchRiostream(b, []benchCase{
		{"lat/size=64", 64, 2 * 100, "1", "100"},
		{"bw/size=4096", 4096, 2 * 500, "500", "1"},
		{"bw/size=65536", 65536, 2 * 100, "100", "1"},
	}, func(b testing.TB, s cmtest.Side, args ...string) cmtest.Result {
		_, rc := pairOn(b, e.Addr, dev, s, s.InNetns(e.PeerNetns), args...)
		return rc
	})
}
