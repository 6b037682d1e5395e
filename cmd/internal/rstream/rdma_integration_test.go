package rstream

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

var rdmaMode = mode{
	name: "rdma",
	addr: func(t testing.TB) netip.Addr {
		a, _ := cmtest.RxeAddr(t)
		return a
	},
	wait: func(t testing.TB, a netip.AddrPort) error {
		_, dev := cmtest.RxeAddr(t)
		return cmtest.WaitListen(dev, a, 20*time.Second)
	},
}

// TestIntegrationRstreamRDMA: over rsockets on the rxe device, ours
// interoperates with rdma-core's rstream in both roles.
func TestIntegrationRstreamRDMA(t *testing.T) { interop(t, rdmaMode) }

// TestIntegrationRstreamRDMAErrors: a client with nobody listening on
// the rxe address, blocking and not, ends as rdma-core's does.
func TestIntegrationRstreamRDMAErrors(t *testing.T) {
	a := rdmaMode.addr(t)
	o, r := ours(nil), theirs(t)
	nobody := strconv.Itoa(int(cmtest.Port()))
	for _, args := range [][]string{
		{"-s", a.String(), "-p", nobody, "-C", "1"},
		{"-T", "b", "-s", a.String(), "-p", nobody, "-C", "1"},
	} {
		rt := r.Start(args, 30*time.Second)()
		ro := o.Start(args, 30*time.Second)()
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
	}
}
