package rsocket

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/rxetest"
	"github.com/rdmastack/rdmastack/internal/testenv"
)

// TestWireRsocketNetem: with testenv.WireFaults (loss, reordering,
// duplication, corruption, delay) on both guests' egress, one stream
// carries netemSize bytes each way at once: each side's SHA-256 of what
// it read equals the peer's of what it wrote, neither side sees an
// error, and nothing is left on either device.
func TestWireRsocketNetem(t *testing.T) {
	w, dev := rxetest.Wire(t)
	checkNoLeaks(t, &dev)
	const netemSize = 2 << 20
	w.Netem(t, testenv.WireFaults)
	c := wireConn(t, w, "conn", &ListenConfig{}, &Dialer{})
	retries := retransmissions(t)
	w.Sync(t, t.Name()+"/go")
	start := time.Now()
	sent := sha256.New()
	errc := make(chan error, 1)
	go func() {
		src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{byte(w.Side)}), netemSize), sent)
		n, err := io.CopyBuffer(c, src, make([]byte, 64<<10))
		if err == nil && n != netemSize {
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
	t.Logf("read %d bytes in %v (%.2f MB/s each way), %d retransmission rounds here; rxe counters: %s",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds()/1e6, retransmissions(t)-retries, rxeCounters())
	if rerr != nil || n != netemSize {
		t.Errorf("read %d bytes of %d: %v", n, netemSize, rerr)
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
	w.Sync(t, t.Name()+"/done")
}
