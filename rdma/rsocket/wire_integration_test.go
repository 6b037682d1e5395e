package rsocket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestWireRsocketBulk moves 16 MiB through a Dial→Listen stream from one
// guest to the other, each way: the receiver's SHA-256 of what it read
// equals the sender's of what it wrote, and nothing is left on either
// guest's device afterwards.
func TestWireRsocketBulk(t *testing.T) {
	w, dev := rxetest.Wire(t)
	wireBulk(t, w, dev)
}

// TestWireSIWRsocketBulk is TestWireRsocketBulk on Soft-iWARP (rsockets'
// iWARP mode, over TCP).
func TestWireSIWRsocketBulk(t *testing.T) {
	w, dev := rxetest.WireSIW(t)
	wireBulk(t, w, dev)
}

func wireBulk(t *testing.T, w *testenv.WireEnv, dev uint32) {
	checkNoLeaks(t, &dev)
	const size = 16 << 20
	for _, sender := range []int{0, 1} {
		t.Run(fmt.Sprintf("from-side-%d", sender), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var sum string
			start := time.Now()
			if w.Side == sender {
				c, err := DialContext(ctx, "rdma", wirePeer(t, w).String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(3 * time.Minute))
				h := sha256.New()
				src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{byte(sender)}), size), h)
				if n, err := io.CopyBuffer(c, src, make([]byte, 256<<10)); n != size || err != nil {
					t.Fatalf("sent %d bytes of %d: %v", n, size, err)
				}
				if err := c.CloseWrite(); err != nil {
					t.Fatal(err)
				}
				// c stays open until the receiver has checked the sum.
				sum = hex.EncodeToString(h.Sum(nil))
			} else {
				l, err := Listen("rdma", netip.AddrPortFrom(w.Self, 0).String())
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				wireAnnounce(t, w, l)
				c, err := l.AcceptConn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(3 * time.Minute))
				h := sha256.New()
				if n, err := io.CopyBuffer(h, c, make([]byte, 256<<10)); n != size || err != nil {
					t.Fatalf("received %d bytes of %d: %v", n, size, err)
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				sum = hex.EncodeToString(h.Sum(nil))
			}
			d := time.Since(start)
			if peer := w.Exchange(t, t.Name()+"/sum", sum); peer != sum {
				t.Fatalf("SHA-256 here %s, on the peer %s", sum, peer)
			}
			t.Logf("16 MiB in %v (%.1f MB/s), this side (%s) %s, the peer's kernel %s",
				d.Round(time.Millisecond), float64(size)/d.Seconds()/1e6, testenv.KernelRelease(), map[bool]string{true: "sent", false: "received"}[w.Side == sender], w.PeerKernel)
		})
	}
}

// wireAnnounce hands the port l listens on to the peer, which takes it
// with wirePeer in the same test.
func wireAnnounce(t *testing.T, w *testenv.WireEnv, l *Listener) {
	t.Helper()
	w.Exchange(t, t.Name()+"/port", strconv.Itoa(int(l.Addr().(*Addr).AddrPort().Port())))
}

// wirePeer is the address of the peer's listener, whose port the peer
// handed over with wireAnnounce (or "" when its Listen failed: that
// fails the test).
func wirePeer(t *testing.T, w *testenv.WireEnv) netip.AddrPort {
	t.Helper()
	return netip.AddrPortFrom(w.Peer, mustPort(t, w.Exchange(t, t.Name()+"/port", "")))
}

// mustPort parses a port the peer sent.
func mustPort(t testing.TB, s string) uint16 {
	t.Helper()
	p, err := strconv.ParseUint(s, 10, 16)
	if err != nil || p == 0 {
		t.Fatalf("the peer's port %q: %v", s, err)
	}
	return uint16(p)
}
