package rsocket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Faults on the wire between two guests: outages (netem dropping every
// packet both ways), a peer killed, and connection setup under loss.
// The bounds checked are the package documentation's: a connection
// with sends in flight fails within DefaultFailureBound of its peer
// going silent, one with nothing in flight within its keepalive
// interval more. faultSlack is what is allowed beyond them for the
// guests' timers under emulation and for the two halves starting the
// outage at slightly different times.
const faultSlack = 1500 * time.Millisecond

// wireConn connects the two halves with one stream, side 1 dialing
// side 0, and returns this half's end; tag names the rendezvous.
func wireConn(t testing.TB, w *testenv.WireEnv, tag string, lc *ListenConfig, d *Dialer) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var c *Conn
	if w.Side == 0 {
		l, err := lc.Listen(ctx, "rdma", netip.AddrPortFrom(w.Self, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		w.Exchange(t, t.Name()+"/"+tag, strconv.Itoa(int(l.Addr().(*Addr).AddrPort().Port())))
		if c, err = l.AcceptConn(ctx); err != nil {
			t.Fatal(err)
		}
	} else {
		port := w.Exchange(t, t.Name()+"/"+tag, "")
		var err error
		if c, err = d.DialContext(ctx, "rdma", netip.AddrPortFrom(w.Peer, mustPort(t, port)).String()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(2 * time.Minute)) // a hang fails, as a timeout
	return c
}

// ended is how one direction of pump ended.
type ended struct {
	err error
	at  time.Time
}

// pump keeps c busy both ways until each direction fails: one goroutine
// writes without end, another reads all that comes.
func pump(c *Conn) (wrote, read <-chan ended) {
	wc, rc := make(chan ended, 1), make(chan ended, 1)
	loop := func(ch chan<- ended, f func([]byte) (int, error)) {
		buf := make([]byte, 64<<10)
		for {
			if _, err := f(buf); err != nil {
				ch <- ended{err, time.Now()}
				return
			}
		}
	}
	go loop(wc, c.Write)
	go loop(rc, c.Read)
	return wc, rc
}

// awaitEnd waits for both directions of pump to end, within bound of
// start (and faultSlack), each with an error that ok accepts.
func awaitEnd(t *testing.T, wrote, read <-chan ended, start time.Time, bound time.Duration, ok func(error) bool) {
	t.Helper()
	for _, d := range []struct {
		what string
		ch   <-chan ended
	}{{"Write", wrote}, {"Read", read}} {
		select {
		case e := <-d.ch:
			took := e.at.Sub(start)
			t.Logf("%s ended %v after the fault: %v", d.what, took.Round(time.Millisecond), e.err)
			if !ok(e.err) {
				t.Errorf("%s ended with %v", d.what, e.err)
			}
			if took > bound+faultSlack {
				t.Errorf("%s ended %v after the fault, beyond the bound %v", d.what, took, bound)
			}
		case <-time.After(time.Until(start.Add(bound + faultSlack + 10*time.Second))):
			t.Fatalf("%s still blocked %v after the fault", d.what, time.Since(start))
		}
	}
}

// peerSilent reports whether err is a connection that failed because
// its peer went silent: past its failure bound (ErrPeerSilent), or where
// the transport's retries ran out first, on a work completion (or,
// once, seen on 6.12's rxe, the QP went to the error state without an
// error of its own, and every send was flushed).
func peerSilent(err error) bool {
	if errors.Is(err, ErrPeerSilent) {
		return errors.Is(err, unix.ETIMEDOUT)
	}
	var ce *CompletionError
	return errors.Is(err, unix.EIO) && errors.As(err, &ce) &&
		(ce.Status == uverbs.WCRetryExcErr || ce.Status == uverbs.WCWRFlushErr)
}

// netemIdle puts a netem qdisc that drops nothing on the wire, so that
// an outage later changes its parameters rather than replacing the root
// qdisc while traffic flows.
func netemIdle(t *testing.T, w *testenv.WireEnv) { w.Netem(t, "loss 0%") }

// outage drops every packet this guest sends for d (netem's loss 100%),
// after a short delay that lets a transfer get going; the two halves
// calling it at once cut the wire both ways. netemIdle must have put the
// qdisc in place. (An ingress drop instead, tried on 2026-12-03 to
// spare rxe the drops inside its own send, made 6.12 QPs flush without
// an error of their own as the cut began, and once kept a new
// connection from being made after it.)
func outage(t *testing.T, w *testenv.WireEnv, d time.Duration) {
	time.Sleep(200 * time.Millisecond)
	w.Netem(t, "loss 100%")
	time.Sleep(d)
	netemIdle(t, w)
}

// TestWireRsocketOutageShort: the wire cut both ways for 300 ms in the
// middle of a transfer, well within the default retries' budget: the
// transport retransmits (a retry counter moves, on either side) and
// the stream goes on, every byte intact.
func TestWireRsocketOutageShort(t *testing.T) {
	w, dev := rxetest.Wire(t)
	checkNoLeaks(t, &dev)
	netemIdle(t, w)
	c := wireConn(t, w, "conn", &ListenConfig{}, &Dialer{})
	const sender = 1
	retries := rxetest.Retransmissions(t)
	w.Sync(t, t.Name()+"/go")
	h := sha256.New()
	var n int64
	if w.Side == sender {
		stop := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			src := rand.NewChaCha8([32]byte{7})
			buf := make([]byte, 64<<10)
			for {
				select {
				case <-stop:
					errc <- c.CloseWrite()
					return
				default:
				}
				src.Read(buf)
				h.Write(buf)
				if _, err := c.Write(buf); err != nil {
					errc <- err
					return
				}
				n += int64(len(buf))
			}
		}()
		outage(t, w, 300*time.Millisecond)
		time.Sleep(500 * time.Millisecond) // and some more after it
		close(stop)
		if err := <-errc; err != nil {
			t.Fatalf("write across the outage: %v", err)
		}
	} else {
		errc := make(chan error, 1)
		go func() {
			var err error
			n, err = io.Copy(h, c)
			errc <- err
		}()
		outage(t, w, 300*time.Millisecond)
		if err := <-errc; err != nil {
			t.Fatalf("read across the outage: %v", err)
		}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if peer := w.Exchange(t, t.Name()+"/sum", sum); peer != sum {
		t.Fatalf("SHA-256 of the %d bytes here %s, on the peer %s", n, sum, peer)
	}
	// The side that had packets in flight when the wire went retransmits:
	// the sender's data, or the receiver's credit updates while the
	// sender waited for them.
	r := rxetest.Retransmissions(t) - retries
	peer, err := strconv.ParseUint(w.Exchange(t, t.Name()+"/retries", strconv.FormatUint(r, 10)), 10, 64)
	if err != nil {
		t.Fatalf("the peer's retransmissions: %v", err)
	}
	if r+peer == 0 {
		t.Fatalf("no retransmission on either side while %d bytes crossed: the outage missed the transfer", n)
	}
	t.Logf("%d bytes, %d retransmission rounds here, %d on the peer", n, r, peer)
}

// TestWireRsocketOutageLong: the wire cut both ways for longer than the
// documented bound, while both sides write and read. Each side's
// blocked Write and Read fail within keepalive interval +
// DefaultFailureBound, with ErrPeerSilent (or a *CompletionError, see
// peerSilent, or the ECONNRESET of a peer whose QP failed first); Close
// does not wait; nothing is
// left on the device; and once the wire is back a new connection moves
// data.
func TestWireRsocketOutageLong(t *testing.T) {
	w, dev := rxetest.Wire(t)
	checkNoLeaks(t, &dev)
	const ka = time.Second
	bound := ka + DefaultFailureBound
	netemIdle(t, w)
	c := wireConn(t, w, "conn", &ListenConfig{KeepAlive: ka}, &Dialer{KeepAlive: ka})
	wrote, read := pump(c)
	w.Sync(t, t.Name()+"/cut")
	time.Sleep(200 * time.Millisecond)
	w.Netem(t, "loss 100%")
	start := time.Now()
	// A 6.12 QP was seen flushed without an error of its own as a cut
	// began; its peer then hears the disconnect of that failure:
	// ECONNRESET, typed and within the bound.
	awaitEnd(t, wrote, read, start, bound, func(err error) bool {
		return peerSilent(err) || errors.Is(err, unix.ECONNRESET)
	})
	t.Logf("rxe counters: %s", rxetest.Counters())
	// The outage outlasts the bound on both sides before the wire is
	// back, so that neither learns of the failure from the other.
	time.Sleep(time.Until(start.Add(bound + faultSlack)))
	netemIdle(t, w)
	closing := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("close after the failure: %v", err)
	}
	if d := time.Since(closing); d > 2*time.Second {
		t.Errorf("close after the failure took %v", d)
	}

	c = wireConn(t, w, "again", &ListenConfig{}, &Dialer{})
	msg := []byte("after the outage")
	if w.Side == 1 {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, len(msg))
	if w.Side == 0 {
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("the new connection read %q, %v", got, err)
		}
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	} else if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("the new connection read %q, %v", got, err)
	}
	w.Sync(t, t.Name()+"/done")
}

// TestWireRsocketPeerKilled: side 1 runs the peer as a process of its
// own (the test binary as peerMain), which writes to side 0 without end
// and reads nothing; it is SIGKILLed mid-transfer. Side 0's Read (data
// flowing) and Write (blocked: the peer grants no credit) end within
// DefaultFailureBound: the dead process's kernel disconnects, an error
// matching unix.ECONNRESET, or, if our sends notice first, a
// *CompletionError or ErrPeerSilent. Nothing is left on either guest's device.
func TestWireRsocketPeerKilled(t *testing.T) {
	w, dev := rxetest.Wire(t)
	wirePeerKilled(t, w, dev)
}

// TestWireSIWRsocketPeerKilled is TestWireRsocketPeerKilled on
// Soft-iWARP: the dead process's kernel resets the TCP connection under
// the QP.
func TestWireSIWRsocketPeerKilled(t *testing.T) {
	w, dev := rxetest.WireSIW(t)
	wirePeerKilled(t, w, dev)
}

func wirePeerKilled(t *testing.T, w *testenv.WireEnv, dev uint32) {
	checkNoLeaks(t, &dev)
	if w.Side == 1 {
		peer := wirePeer(t, w)
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), peerEnv+"="+peer.String())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waited := false
		t.Cleanup(func() {
			if !waited {
				cmd.Process.Kill()
				cmd.Wait()
			}
		})
		w.Sync(t, t.Name()+"/kill")
		cmd.Process.Kill()
		err = cmd.Wait()
		waited = true
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the peer process ended before it was killed: %v\n%s", err, stderr.String())
		}
		w.Sync(t, t.Name()+"/done")
		return
	}
	l, err := Listen("rdma", netip.AddrPortFrom(w.Self, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	wireAnnounce(t, w, l)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := l.AcceptConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := io.ReadFull(c, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	wrote, read := pump(c)
	time.Sleep(200 * time.Millisecond) // the Write fills the peer's buffer and blocks
	w.Sync(t, t.Name()+"/kill")
	awaitEnd(t, wrote, read, time.Now(), DefaultFailureBound, func(err error) bool {
		var ce *CompletionError
		return errors.Is(err, unix.ECONNRESET) || errors.As(err, &ce) || errors.Is(err, ErrPeerSilent)
	})
	w.Sync(t, t.Name()+"/done")
}

// TestWireRsocketDialLossy: with 20% of the packets lost each way, a
// Dial either connects or fails with a deadline error (or the CM's
// ETIMEDOUT) within its Timeout, here long enough for two sends of the
// connection request (4.6s apart with the default ACK timeout). The
// listener accepts no more than was dialed and leaves nothing behind.
func TestWireRsocketDialLossy(t *testing.T) {
	w, dev := rxetest.Wire(t)
	checkNoLeaks(t, &dev)
	const dials = 2
	const limit = 6 * time.Second
	if w.Side == 0 {
		l, err := Listen("rdma", netip.AddrPortFrom(w.Self, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		wireAnnounce(t, w, l)
		accepted := make(chan int, 1)
		go func() {
			n := 0
			for {
				c, err := l.AcceptConn(context.Background())
				if err != nil {
					accepted <- n
					return
				}
				n++
				c.Close()
			}
		}()
		w.Netem(t, "loss 20%")
		connected := w.Exchange(t, t.Name()+"/done", "")
		w.NetemOff(t)
		l.Close()
		if n := <-accepted; n > dials {
			t.Fatalf("accepted %d connections of %d dials", n, dials)
		} else {
			t.Logf("accepted %d, the peer connected %s of %d", n, connected, dials)
		}
		return
	}
	addr := wirePeer(t, w).String()
	w.Netem(t, "loss 20%")
	connected := 0
	for range dials {
		start := time.Now()
		c, err := (&Dialer{Timeout: limit}).DialContext(context.Background(), "rdma", addr)
		took := time.Since(start)
		t.Logf("dial under loss: %v after %v", err, took.Round(time.Millisecond))
		if took > limit+time.Second {
			t.Errorf("dial took %v, its Timeout %v", took, limit)
		}
		if err == nil {
			connected++
			c.Close()
		} else if !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, unix.ETIMEDOUT) {
			t.Errorf("dial under loss failed with %v, want a deadline or ETIMEDOUT", err)
		}
	}
	w.NetemOff(t)
	w.Exchange(t, t.Name()+"/done", strconv.Itoa(connected))
}
