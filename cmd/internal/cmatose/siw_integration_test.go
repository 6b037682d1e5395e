package cmatose

import (
	"fmt"
	"os"
	"strconv"
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
	// 50 connections, past the 145th page each process maps in its
	// context, at the offset libsiw takes for "no queue": rdma-core's
	// client fails there ("unable to create CQ"); ours does not.
	t.Run("ours-ours-50", func(t *testing.T) {
		cmtest.NoCMIDsLeft(t, dev)
		cmtest.NoQPsLeft(t, dev)
		run(t, e.Addr, dev, o, oPeer, "-c", "50", "-C", "2", "-S", "100")
	})
}

// BenchmarkSIWUcmatose is BenchmarkUcmatose on Soft-iWARP: whole runs of
// 30 connections (10 messages of 100 bytes each way), the server on siw0
// and the client on siw1 in the peer namespace, ours and rdma-core's as
// processes copied to tmpfs, in 8 ABBA rounds after a warm-up. Not 50:
// rdma-core's own client fails at 50 ("unable to create CQ", status -12):
// libsiw takes the offset of a context's 145th mapped page, which equals
// SIW_INVAL_UOBJ_KEY, for "no queue" (ours maps it; see
// TestIntegrationSIWUcmatose/ours-ours-50).
//
//	go run ./test/vm test -unit=false -race none -wire=false -scale '' -- -test.run XXX -test.bench SIWUcmatose -test.benchtime 1x
func BenchmarkSIWUcmatose(b *testing.B) {
	const conns = 30
	e, dev := cmtest.SIW(b)
	ours, theirs := cmtest.Binaries(b, "ucmatose")
	for range b.N {
		cmtest.BindConnect{Dev: dev, Addr: e.Addr, PeerNetns: e.PeerNetns, Args: []string{"-c", strconv.Itoa(conns)},
			Per: conns, Unit: "conn"}.Run(b, ours, theirs)
	}
}
