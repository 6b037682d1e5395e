package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The environment test/vm gives the two guests of a wire pair.
const (
	EnvWireSide       = "RDMASTACK_WIRE_SIDE"        // 0 or 1
	EnvWireSelf       = "RDMASTACK_WIRE_SELF"        // this guest's address on eth0
	EnvWirePeer       = "RDMASTACK_WIRE_PEER"        // the other guest's
	EnvWirePeerKernel = "RDMASTACK_WIRE_PEER_KERNEL" // the other guest's uname -r
)

// WirePort is the TCP port of the wire's rendezvous (Sync, Exchange) on
// side 0's address.
const WirePort = 7470

// WireTimeout bounds one rendezvous: the peer may still be booting, or
// finishing the wire tests of an earlier test binary.
const WireTimeout = 2 * time.Minute

// WireEnv is a wire test's view of its pair of guests: test/vm runs the
// test (its name starts with TestWire) in two guests at once, each with
// one RDMA device on eth0 (Dev: rxe0, or siw0 for the wire tests named
// SIW), the two eth0s joined by a wire. The two processes run the same
// test; Side tells them apart, and they meet with Sync and Exchange,
// one at a time. test/vm takes every test whose name starts with TestWire
// for a wire test (it runs them in the pairs, and in no single guest): no
// other test may be named so. A benchmark whose name starts with
// BenchmarkWire is a wire benchmark, run the same way; test/vm gives the
// pairs a count (-test.benchtime Nx), so both halves run the same b.N.
type WireEnv struct {
	Side       int        // 0 or 1: which half of the test this process runs
	Self, Peer netip.Addr // the two guests' addresses on eth0, Dev's netdev
	PeerKernel string     // the other guest's kernel release
	// Dev is the RDMA device on eth0, the guest's only one: SIWDev where
	// there is one, else rxe0.
	Dev string
	// SIWDev is this guest's Soft-iWARP device on eth0 (siw0), there
	// instead of rxe0 in the pairs that run the wire tests named SIW
	// (test/vm runs them in pairs of their own), else empty. rdma_cm
	// binds an address of eth0 to the first device it finds there, so
	// siw0 is alone on it.
	SIWDev string

	port uint16 // of the rendezvous; 0 is WirePort
}

// Wire returns the test's wire. Outside the VM the test skips; inside a
// guest that is not one of a pair it fails (test/vm runs wire tests only
// in pairs).
func Wire(t testing.TB) *WireEnv {
	t.Helper()
	if !InVM() {
		t.Skip("a wire test runs in test/vm's pairs of guests")
	}
	side := os.Getenv(EnvWireSide)
	if side == "" {
		t.Fatalf("a wire test runs only in a pair of guests (no %s here)", EnvWireSide)
	}
	w, err := parseWire(side, os.Getenv(EnvWireSelf), os.Getenv(EnvWirePeer), os.Getenv(EnvWirePeerKernel))
	if err != nil {
		t.Fatal(err)
	}
	w.SIWDev, w.Dev = os.Getenv(EnvWireSIWDev), WireRXEDev
	if w.SIWDev != "" {
		w.Dev = w.SIWDev
	}
	return w
}

// WireRXEDev is the device on eth0 in the pairs of the wire tests not
// named SIW.
const WireRXEDev = "rxe0"

// WireSIW is Wire for a wire test named SIW: it fails unless the pair has
// siw0 on eth0 (test/vm gives it to the pairs that run those tests).
func WireSIW(t testing.TB) *WireEnv {
	t.Helper()
	w := Wire(t)
	if w.SIWDev == "" {
		t.Fatalf("a wire test named SIW runs in a pair with siw0 on eth0 (no %s here)", EnvWireSIWDev)
	}
	return w
}

func parseWire(side, self, peer, kernel string) (*WireEnv, error) {
	n, err := strconv.Atoi(side)
	if err != nil || (n != 0 && n != 1) {
		return nil, fmt.Errorf("%s=%q: want 0 or 1", EnvWireSide, side)
	}
	w := &WireEnv{Side: n, PeerKernel: kernel}
	if w.Self, err = netip.ParseAddr(self); err != nil {
		return nil, fmt.Errorf("%s: %v", EnvWireSelf, err)
	}
	if w.Peer, err = netip.ParseAddr(peer); err != nil {
		return nil, fmt.Errorf("%s: %v", EnvWirePeer, err)
	}
	if kernel == "" {
		return nil, fmt.Errorf("%s is empty", EnvWirePeerKernel)
	}
	return w, nil
}

// Sync waits until the peer reaches the Sync of the same name: a barrier
// of the two halves. It fails the test after WireTimeout, or if the peer
// is at a different one (the halves are out of step).
func (w *WireEnv) Sync(t testing.TB, name string) {
	t.Helper()
	w.Exchange(t, name, "")
}

// Exchange is Sync that also hands value to the peer and returns the
// peer's (a port, a GID): one line of text, without a newline.
func (w *WireEnv) Exchange(t testing.TB, name, value string) string {
	t.Helper()
	v, err := w.exchange(name, value, time.Now().Add(WireTimeout))
	if err != nil {
		t.Fatalf("wire rendezvous %q with %s (side %d): %v", name, w.Peer, 1-w.Side, err)
	}
	return v
}

// exchange is one rendezvous over kernel TCP on the wire: side 0 accepts
// one connection on WirePort, side 1 dials it until it answers. Each sends
// "name\tvalue\n" and reads the other's.
func (w *WireEnv) exchange(name, value string, deadline time.Time) (string, error) {
	if strings.ContainsAny(name+value, "\t\n") {
		return "", errors.New("name and value may not hold a tab or a newline")
	}
	port := w.port
	if port == 0 {
		port = WirePort
	}
	var c net.Conn
	if w.Side == 0 {
		l, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(w.Self, port)))
		if err != nil {
			return "", fmt.Errorf("listen: %w", err)
		}
		l.SetDeadline(deadline)
		c, err = l.Accept()
		l.Close()
		if err != nil {
			return "", fmt.Errorf("accept: %w", err)
		}
	} else {
		addr := netip.AddrPortFrom(w.Peer, port).String()
		for {
			var err error
			d := net.Dialer{Deadline: deadline}
			if c, err = d.Dial("tcp", addr); err == nil {
				break
			}
			if time.Now().Add(100 * time.Millisecond).After(deadline) {
				return "", fmt.Errorf("dial: %w", err)
			}
			time.Sleep(100 * time.Millisecond) // the peer is not listening yet
		}
	}
	defer c.Close()
	c.SetDeadline(deadline)
	if _, err := fmt.Fprintf(c, "%s\t%s\n", name, value); err != nil {
		return "", fmt.Errorf("send: %w", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("receive: %w", err)
	}
	peerName, peerValue, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
	if !ok {
		return "", fmt.Errorf("receive: malformed line %q", line)
	}
	if peerName != name {
		return "", fmt.Errorf("out of step: the peer is at %q", peerName)
	}
	return peerValue, nil
}
