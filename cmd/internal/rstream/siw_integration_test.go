package rstream

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// siwMode is the siw guest's mode: servers on siw0's address (dev),
// clients in the peer namespace (cmtest.Side.InNetns).
func siwMode(e *testenv.SIWEnv, dev uint32) mode {
	return mode{
		name: "siw",
		addr: func(testing.TB) netip.Addr { return e.Addr },
		wait: func(_ testing.TB, a netip.AddrPort) error { return cmtest.WaitListen(dev, a, 20*time.Second) },
	}
}

// TestIntegrationSIWRstream: on Soft-iWARP, where rsockets send each
// message's word with a SEND (RS_OPT_MSG_SEND), ours against ours and
// against rdma-core's rstream in both roles, as interop does on rxe: the
// server on siw0, the client on siw1 in the peer namespace (ours there
// as a process).
func TestIntegrationSIWRstream(t *testing.T) {
	e, dev := cmtest.SIW(t)
	m := siwMode(e, dev)
	o, r := ours(nil), theirs(t)
	op, rp := cmtest.Self("ours").InNetns(e.PeerNetns), r.InNetns(e.PeerNetns)
	for _, p := range [][2]cmtest.Side{{o, op}, {r, op}, {o, rp}} {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			cmtest.NoQPsLeft(t, dev)
			interopPair(t, m, p[0], p[1])
		})
	}
}
