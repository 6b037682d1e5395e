package cmtest

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// WirePair is one run of a server and a client across the wire of a
// test/vm pair: side 0's guest runs Server, side 1's runs Client.
type WirePair struct {
	Server, Client Side
	// ServerArgs are the server's arguments for this guest's address
	// and the port; ClientArgs the client's for the peer's (side 0's)
	// address and the port.
	ServerArgs func(self netip.Addr, port string) []string
	ClientArgs func(peer netip.Addr, port string) []string
	// Port is the port; 0 means a fresh one (Port).
	Port uint16
	// Ready tells when the server is ready for the client; nil means
	// WaitListen on this guest's address and the port.
	Ready func(port uint16) error
	// Limit bounds each side's run.
	Limit time.Duration
}

// Run runs this guest's end of p: on side 0 the server, whose port goes
// to side 1 once it is ready, and on side 1 then the client. It returns
// the Side that ran here, its role ("server" or "client") and how it
// ended. A server that does not get ready fails both sides at once.
// Both sides meet again when t ends, so that the next test starts in
// step whichever side failed (each tells the other that it failed).
func (p WirePair) Run(t *testing.T, w *testenv.WireEnv, dev uint32) (Side, string, Result) {
	t.Helper()
	WireDone(t, w)
	if w.Side == 0 {
		port := p.Port
		if port == 0 {
			port = Port()
		}
		ready := p.Ready
		if ready == nil {
			ready = func(port uint16) error {
				return WaitListen(dev, netip.AddrPortFrom(w.Self, port), 20*time.Second)
			}
		}
		wait := p.Server.Start(p.ServerArgs(w.Self, strconv.Itoa(int(port))), p.Limit)
		if err := ready(port); err != nil {
			w.Exchange(t, t.Name()+"/port", "")
			t.Fatalf("%v server: %v\n%v", p.Server, err, wait())
		}
		w.Exchange(t, t.Name()+"/port", strconv.Itoa(int(port)))
		return p.Server, "server", wait()
	}
	port := w.Exchange(t, t.Name()+"/port", "")
	if port == "" {
		t.Fatalf("the peer's %v server did not get ready", p.Server)
	}
	return p.Client, "client", p.Client.Start(p.ClientArgs(w.Peer, port), p.Limit)()
}

// WireDone makes both sides of t meet when t ends (after its other
// cleanups registered later), each telling the other whether it passed,
// so that a side that fails early does not leave the other at a
// rendezvous of the next test. Call it first in a wire test's subtest.
func WireDone(t *testing.T, w *testenv.WireEnv) {
	t.Helper()
	t.Cleanup(func() {
		mine := map[bool]string{false: "passed", true: "failed"}[t.Failed()]
		if peer := w.Exchange(t, t.Name()+"/done", mine); peer != "passed" {
			t.Logf("side %d (the peer, kernel %s) %s", 1-w.Side, w.PeerKernel, peer)
		}
	})
}
