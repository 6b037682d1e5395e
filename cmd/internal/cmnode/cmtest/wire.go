package cmtest

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
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

// WireRun runs one server and client pair of s across the wire of a
// test/vm pair, the two halves of a wire test or benchmark calling it
// alike (name tells their runs apart and must be the same on both): side
// 0's guest runs s as the server with args(port, false) and, once wait
// says it listens, hands the port to side 1's, which runs s as the
// client with args(port, true) and measures its result. Both halves
// return what measure returned; a side that fails fails tb, and its peer
// too, without waiting for it.
func WireRun(tb testing.TB, w *testenv.WireEnv, name string, s Side, wait func(port uint16) error,
	args func(port uint16, client bool) []string, measure func(client Result) (string, error)) string {
	tb.Helper()
	return WireRunSides(tb, w, name, s, s, wait, args, measure)
}

// WireRunSides is WireRun with one program serving (on side 0) and
// another connecting (on side 1): ours against the C tool's, say, to
// tell which end of a pair costs what.
func WireRunSides(tb testing.TB, w *testenv.WireEnv, name string, server, client Side, wait func(port uint16) error,
	args func(port uint16, client bool) []string, measure func(client Result) (string, error)) string {
	tb.Helper()
	const limit = 5 * time.Minute
	const failed = "failed: "
	if w.Side == 0 {
		port := Port()
		waitS := server.Start(args(port, false), limit)
		if err := wait(port); err != nil {
			w.Exchange(tb, name+"/port", failed+"the server")
			tb.Fatalf("%v server: %v\n%v", server, err, waitS())
		}
		w.Exchange(tb, name+"/port", strconv.Itoa(int(port)))
		rs := waitS()
		status := "ok"
		if rs.Code != 0 {
			status = failed + "the server"
		}
		v := w.Exchange(tb, name+"/result", status)
		if status != "ok" {
			tb.Fatalf("%v server: %v", server, rs)
		}
		if strings.HasPrefix(v, failed) {
			tb.Fatalf("%v server ended well, but the peer's %v client %s", server, client, v)
		}
		return v
	}
	p := w.Exchange(tb, name+"/port", "")
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		tb.Fatalf("the peer's server port %q: %v", p, err)
	}
	rc := client.Start(args(uint16(port), true), limit)()
	var v string
	if rc.Code != 0 {
		err = errors.New("it failed")
	} else {
		v, err = measure(rc)
	}
	if err != nil {
		w.Exchange(tb, name+"/result", failed+"the client")
		tb.Fatalf("%v client: %v\n%v", client, err, rc)
	}
	if st := w.Exchange(tb, name+"/result", v); st != "ok" {
		tb.Fatalf("%v client ended well, but the peer's %v server %s", client, server, st)
	}
	return v
}
