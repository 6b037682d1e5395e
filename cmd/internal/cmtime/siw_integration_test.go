package cmtime

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// TestMain lets the test binary be cmtime (cmtest.Self): the client in
// the siw peer's namespace must be a process.
func TestMain(m *testing.M) {
	cmtest.RunSelf(ours)
	os.Exit(m.Run())
}

// TestIntegrationSIWCmtime: on Soft-iWARP, 10 connections timed step by
// step, ours against ours and against rdma-core's in both roles, and a
// client binding its source address (-b, siw1's) against each server:
// the server on siw0, the client on siw1 in the peer namespace (ours
// there as a process). Every step's line and every row of the table are
// checked; nothing is left on the device.
func TestIntegrationSIWCmtime(t *testing.T) {
	e, dev := cmtest.SIW(t)
	o, r := sides(t)
	oPeer, rPeer := cmtest.Self("ours").InNetns(e.PeerNetns), r.InNetns(e.PeerNetns)
	for _, tc := range []struct {
		server, client cmtest.Side
		bind           bool
	}{{o, oPeer, false}, {r, oPeer, false}, {o, rPeer, false}, {r, oPeer, true}, {o, rPeer, true}} {
		t.Run(fmt.Sprintf("%v-%v-bind=%v", tc.server, tc.client, tc.bind), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			cmtest.NoQPsLeft(t, dev)
			ap := netip.AddrPortFrom(e.Addr, cmtest.Port())
			stop := serve(t, dev, tc.server, ap)
			args := []string{"-s", e.Addr.String(), "-p", strconv.Itoa(int(ap.Port())), "-c", "10"}
			if tc.bind {
				args = append(args, "-b", e.PeerAddr.String())
			}
			res := tc.client.Start(args, 120*time.Second)()
			stop()
			checkGood(t, res, 10, tc.bind)
		})
	}
}
