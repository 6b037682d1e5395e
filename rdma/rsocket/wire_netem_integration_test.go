package rsocket

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestWireRsocketNetem: with testenv.WireFaults (loss, reordering,
// duplication, corruption, delay) on both guests' egress, one stream
// carries netemSize bytes each way at once: each side's SHA-256 of what
// it read equals the peer's of what it wrote, neither side sees an
// error, and nothing is left on either device.
func TestWireRsocketNetem(t *testing.T) {
	w, dev := rxetest.Wire(t)
	wireNetem(t, w, dev)
}

// TestWireSIWRsocketNetem is TestWireRsocketNetem on Soft-iWARP, where
// TCP recovers what the wire loses.
func TestWireSIWRsocketNetem(t *testing.T) {
	w, dev := rxetest.WireSIW(t)
	wireNetem(t, w, dev)
}

func wireNetem(t *testing.T, w *testenv.WireEnv, dev uint32) {
	checkNoLeaks(t, &dev)
	const netemSize = 1 << 20
	w.Netem(t, testenv.WireFaults)
	c := wireConn(t, w, "conn", &ListenConfig{}, &Dialer{})
	w.Sync(t, t.Name()+"/go")
	twoWay(t, w, c, netemSize)

	// Then, on a new connection with rstream's buffers, side 0 writes
	// netemLast bytes and closes at once, as a server does when it is
	// done: Close lingers until the peer has them (seconds on this wire:
	// a linger time of 1 s lost them), and side 1 reads them all and
	// then io.EOF, not a reset.
	const netemLast = 512 << 10
	c = wireConn(t, w, "last", &ListenConfig{ReadBuffer: 512 << 10, WriteBuffer: 512 << 10}, &Dialer{ReadBuffer: 512 << 10, WriteBuffer: 512 << 10})
	if w.Side == 0 {
		if _, err := c.Write(make([]byte, netemLast)); err != nil {
			t.Fatalf("the last write: %v", err)
		}
		start := time.Now()
		err := c.Close()
		c.mu.Lock()
		ferr := c.flow.err
		c.mu.Unlock()
		t.Logf("Close after the last write took %v: %v (the connection: %v)", time.Since(start).Round(time.Millisecond), err, ferr)
		if err != nil || ferr != nil {
			t.Errorf("Close after the last write: %v (the connection: %v)", err, ferr)
		}
	} else {
		n, err := io.Copy(io.Discard, c)
		if n != netemLast || err != nil {
			t.Errorf("read %d bytes of the last %d, then %v; want io.EOF", n, netemLast, err)
		}
	}
	w.Sync(t, t.Name()+"/done")
}

// twoWay carries size bytes each way over c at once and checks that each
// side's SHA-256 of what it read equals the peer's of what it wrote and
// that neither direction failed; it logs the goodput and the transport's
// retransmissions, and returns how long the transfer took.
func twoWay(t testing.TB, w *testenv.WireEnv, c *Conn, size int64) time.Duration {
	t.Helper()
	retries := rxetest.Retransmissions(t)
	start := time.Now()
	sent := sha256.New()
	errc := make(chan error, 1)
	go func() {
		src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{byte(w.Side)}), size), sent)
		n, err := io.CopyBuffer(c, src, make([]byte, 64<<10))
		if err == nil && n != size {
			err = io.ErrShortWrite
		}
		if err == nil {
			err = c.CloseWrite()
		}
		errc <- err
	}()
	got := sha256.New()
	n, rerr := io.CopyBuffer(got, c, make([]byte, 64<<10))
	werr := <-errc
	took := time.Since(start)
	c.mu.Lock()
	longest := c.dog.longest
	c.mu.Unlock()
	t.Logf("read %d bytes in %v (%.2f MB/s each way), %d retransmission rounds here, the longest wait for an acknowledgement %v; rxe counters: %s",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds()/1e6, rxetest.Retransmissions(t)-retries, longest.Round(time.Millisecond), rxetest.Counters())
	if rerr != nil || n != size {
		t.Errorf("read %d bytes of %d: %v", n, size, rerr)
	}
	if werr != nil {
		t.Errorf("write: %v", werr)
	}
	// What this side sent against what the peer read, and back.
	mine := hex.EncodeToString(sent.Sum(nil)) + " " + hex.EncodeToString(got.Sum(nil))
	peer := w.Exchange(t, t.Name()+"/sums", mine)
	f := strings.Fields(peer)
	if len(f) != 2 {
		t.Fatalf("the peer's sums %q", peer)
	}
	peerSent, peerGot := f[0], f[1]
	if peerSent != hex.EncodeToString(got.Sum(nil)) || peerGot != hex.EncodeToString(sent.Sum(nil)) {
		t.Fatalf("SHA-256: sent %s, read %s; the peer sent %s, read %s", mine[:64], mine[65:], peerSent, peerGot)
	}
	return took
}
