package cmatose

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// TestMain lets the test binary be ucmatose (cmtest.Self): the client in
// the siw peer's namespace must be a process.
func TestMain(m *testing.M) {
	cmtest.RunSelf(ours)
	os.Exit(m.Run())
}

// TestIntegrationSIWUcmatose: on Soft-iWARP (iw_cm over TCP), 4
// connections of 10 messages of 100 bytes each way, and 2 of 4 with -m
// (the ids move to a new channel before the disconnect), ours against
// ours and against rdma-core's in both roles: the server on siw0, the
// client on siw1 in the peer namespace (ours there as a process). Both
// outputs are checked line for line; nothing is left on the device.
func TestIntegrationSIWUcmatose(t *testing.T) {
	e, dev := cmtest.SIW(t)
	o, r := sides(t)
	oPeer, rPeer := cmtest.Self("ours").InNetns(e.PeerNetns), r.InNetns(e.PeerNetns)
	const mig = "migrating to new event channel\n"
	sMig := strings.Replace(serverOut, "cmatose: disconnecting\n", mig+"cmatose: disconnecting\n", 1)
	cMig := strings.Replace(clientOut, "test complete\n", mig+"test complete\n", 1)
	for _, pair := range [][2]cmtest.Side{{o, oPeer}, {r, oPeer}, {o, rPeer}} {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			cmtest.NoQPsLeft(t, dev)
			run(t, e.Addr, dev, pair[0], pair[1], "-c", "4", "-C", "10", "-S", "100")
			runWant(t, e.Addr, dev, pair[0], pair[1], sMig, cMig, "-c", "2", "-C", "4", "-m")
		})
	}
}
