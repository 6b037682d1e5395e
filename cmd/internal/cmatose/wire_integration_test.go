package cmatose

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// wireLoad is how many connections TestWireUcmatoseLoad makes at once:
// about the most that keeps a run within 15 s under TCG. 200 took
// 13.8 s (rdma-core's server) and 19.2 s (ours) in the pair
// 6.12↔6.12; 150 took 16.9 s and 19.3 s in 6.12↔6.1 on a busier host.
const wireLoad = 100

// wireRun runs this guest's end of a ucmatose run across w (side 0's
// guest serves, side 1's connects) with extra arguments on both sides,
// and checks this side's output as runWant does.
func wireRun(t *testing.T, w *testenv.WireEnv, dev uint32, server, client cmtest.Side, limit time.Duration, extra ...string) {
	t.Helper()
	p := cmtest.WirePair{Server: server, Client: client, Limit: limit,
		ServerArgs: func(self netip.Addr, port string) []string {
			return append([]string{"-b", self.String(), "-p", port}, extra...)
		},
		ClientArgs: func(peer netip.Addr, port string) []string {
			return append([]string{"-s", peer.String(), "-p", port}, extra...)
		},
	}
	start := time.Now()
	me, role, r := p.Run(t, w, dev)
	want := map[string]string{"server": serverOut, "client": clientOut}[role]
	if r.Code != 0 || r.Stdout != want {
		t.Fatalf("%v %s: %v", me, role, r)
	}
	t.Logf("%v %s (kernel %s; the peer's %s): %v", me, role, testenv.KernelRelease(), w.PeerKernel, time.Since(start).Round(time.Millisecond))
}

// wirePairs are the pairs (server, client) of the wire tests: ours
// against rdma-core's in both roles, and ours against ours.
func wirePairs(t *testing.T) [][2]cmtest.Side {
	o, r := sides(t)
	return [][2]cmtest.Side{{o, r}, {r, o}, {o, o}}
}

// TestWireUcmatose: 4 connections of 10 messages of 100 bytes each way
// across the wire, ours against rdma-core's in both roles (the pairs of
// test/vm put each kernel on each side) and against ours; each side
// checks its own output and that no id is left.
func TestWireUcmatose(t *testing.T) {
	w, dev := rxetest.Wire(t)
	for _, pair := range wirePairs(t) {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			wireRun(t, w, dev, pair[0], pair[1], 60*time.Second, "-c", "4", "-C", "10", "-S", "100")
		})
	}
}

// TestWireUcmatoseLoad: the CM under load across the wire, wireLoad
// connections at once (ucmatose -c, 10 messages each way on each),
// ours against rdma-core's in both roles.
func TestWireUcmatoseLoad(t *testing.T) {
	w, dev := rxetest.Wire(t)
	for _, pair := range wirePairs(t)[:2] {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			wireRun(t, w, dev, pair[0], pair[1], 120*time.Second, "-c", fmt.Sprint(wireLoad))
		})
	}
}
