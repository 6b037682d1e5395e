package rping

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkRping times whole runs of 1,000 pings of 64 bytes: our server
// and client against rdma-core's pair, and each of ours with rdma-core's
// other side, as processes copied to tmpfs, in 8 ABBA rounds after a
// warm-up:
//
//	go run ./test/vm test -unit=false -devices 1 -scale= -- -test.run XXX -test.bench 'Rping|Ucmatose' -test.benchtime 1x
func BenchmarkRping(b *testing.B) {
	addr, dev := cmtest.RxeAddr(b)
	ours, theirs := cmtest.Binaries(b, "rping")
	for range b.N {
		cmtest.ABBA(b, 8, ours, theirs, func(s, c cmtest.Side) time.Duration {
			port := cmtest.Port()
			args := []string{"-a", addr.String(), "-p", strconv.Itoa(int(port)), "-C", "1000", "-S", "64"}
			return cmtest.Timed(b, dev, netip.AddrPortFrom(addr, port), s, c, append([]string{"-s"}, args...), append([]string{"-c"}, args...))
		})
	}
}
