//go:build rsocket

// The rsockets half of the interop tests: built with -tags rsocket until
// cmd/internal/rsock's dialRDMA and listenRDMA reach package rdma's
// Conn; then drop the build constraint so that the VM runs them.

package rstream

import (
	"net/netip"
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
