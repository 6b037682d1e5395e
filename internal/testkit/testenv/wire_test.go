package testenv

import (
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseWire(t *testing.T) {
	w, err := parseWire("1", "10.88.0.2", "10.88.0.1", "6.1.0-57-amd64")
	if err != nil {
		t.Fatal(err)
	}
	want := WireEnv{Side: 1, Self: netip.MustParseAddr("10.88.0.2"), Peer: netip.MustParseAddr("10.88.0.1"), PeerKernel: "6.1.0-57-amd64"}
	if *w != want {
		t.Errorf("parseWire = %+v, want %+v", *w, want)
	}
	for _, bad := range [][4]string{
		{"2", "10.88.0.1", "10.88.0.2", "k"},
		{"a", "10.88.0.1", "10.88.0.2", "k"},
		{"0", "", "10.88.0.2", "k"},
		{"0", "10.88.0.1", "x", "k"},
		{"0", "10.88.0.1", "10.88.0.2", ""},
	} {
		if _, err := parseWire(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("parseWire(%q): no error", bad)
		}
	}
}

// wirePair is both sides of a wire on the loopback, on a free port.
func wirePair(t *testing.T) (a, b *WireEnv) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	lo := netip.MustParseAddr("127.0.0.1")
	return &WireEnv{Side: 0, Self: lo, Peer: lo, port: port}, &WireEnv{Side: 1, Self: lo, Peer: lo, port: port}
}

// TestRendezvous: the two sides swap values however late either comes,
// several times in a row, and a rendezvous of different names fails both.
func TestRendezvous(t *testing.T) {
	a, b := wirePair(t)
	type res struct {
		v   string
		err error
	}
	deadline := time.Now().Add(10 * time.Second)
	for i, lateSide := range []int{1, 0, -1} {
		ch := make(chan res, 1)
		first, second := a, b
		if lateSide == 0 {
			first, second = b, a
		}
		go func() {
			v, err := first.exchange("step", "from"+string(rune('0'+first.Side)), deadline)
			ch <- res{v, err}
		}()
		if lateSide >= 0 {
			time.Sleep(300 * time.Millisecond)
		}
		v2, err2 := second.exchange("step", "from"+string(rune('0'+second.Side)), deadline)
		r := <-ch
		if r.err != nil || err2 != nil {
			t.Fatalf("round %d: %v, %v", i, r.err, err2)
		}
		if r.v != "from"+string(rune('0'+second.Side)) || v2 != "from"+string(rune('0'+first.Side)) {
			t.Fatalf("round %d: got %q and %q", i, r.v, v2)
		}
	}
	ch := make(chan error, 1)
	go func() { _, err := a.exchange("x", "", deadline); ch <- err }()
	_, err := b.exchange("y", "", deadline)
	if err == nil || !strings.Contains(err.Error(), `out of step: the peer is at "x"`) {
		t.Errorf("side 1 at y, side 0 at x: %v", err)
	}
	if err := <-ch; err == nil || !strings.Contains(err.Error(), `"y"`) {
		t.Errorf("side 0 at x, side 1 at y: %v", err)
	}
}

// TestRendezvousTimeout: without a peer, each side gives up at the
// deadline.
func TestRendezvousTimeout(t *testing.T) {
	a, b := wirePair(t)
	for _, w := range []*WireEnv{a, b} {
		start := time.Now()
		if _, err := w.exchange("alone", "", time.Now().Add(300*time.Millisecond)); err == nil {
			t.Errorf("side %d: no error without a peer", w.Side)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("side %d gave up after %v", w.Side, d)
		}
	}
	if _, err := a.exchange("bad\tname", "", time.Now().Add(time.Second)); err == nil {
		t.Error("a name with a tab: no error")
	}
}

// TestRendezvousOutsideVM: on the host a wire test skips. In the VM this
// test runs in single guests, which have no wire.
func TestRendezvousOutsideVM(t *testing.T) {
	if InVM() {
		if side := os.Getenv(EnvWireSide); side != "" {
			t.Fatalf("a single guest has %s=%s", EnvWireSide, side)
		}
		return
	}
	ran := make(chan bool, 1)
	t.Run("host", func(t *testing.T) {
		defer func() { ran <- t.Skipped() }()
		Wire(t)
	})
	if !<-ran {
		t.Error("Wire did not skip outside the VM")
	}
}
