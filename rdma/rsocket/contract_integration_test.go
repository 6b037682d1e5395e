package rsocket

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// killQP makes c a dead peer: its goroutines stop, so that nothing it
// does answers or disconnects, and its QP goes to the error state, so
// that whatever is sent to it is never acknowledged; its id stays, so
// that no DREQ tells the other side. Its Close then waits for nothing.
func killQP(t *testing.T, c *Conn) {
	t.Helper()
	c.SetLinger(0)
	c.cancel()
	c.loops.Wait()
	if err := c.id.QP().Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState); err != nil {
		t.Fatal(err)
	}
}

// fill writes to c, whose peer does not read, until a Write blocks (for
// 300ms), and returns the Write's error channel.
func fill(c *Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		b := make([]byte, 64<<10)
		for {
			if _, err := c.Write(b); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	return done
}

// rsListenNoLeaks is rsListen for a test that leaves nothing behind:
// the listener is closed before checkNoLeaks looks.
func rsListenNoLeaks(t *testing.T) *Listener {
	t.Helper()
	_, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	l, _ := rsListen(t)
	return l
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// TestIntegrationRSCloseTime: with a live peer, whether it reads or
// not, Close's wait for its DISCONNECT and the sends in flight adds at
// most 100ms to what freeing the connection takes (a Close that waits
// for nothing, SetLinger(0), measured alongside: on a loaded emulated
// guest, that alone may take 100ms or more); with a dead peer (its QP in
// error, no disconnect) Close returns once the failure bound says the
// peer is silent (by default) or within the linger time set, and never
// past the write deadline; SetLinger(0) waits for nothing.
func TestIntegrationRSCloseTime(t *testing.T) {
	l := rsListenNoLeaks(t)
	const tries = 5
	var live, abrupt []time.Duration
	for range tries {
		for _, linger := range []int{-1, 0} {
			cli, srv := rsPair(t, l, nil)
			cli.SetLinger(linger)
			werr := fill(cli) // the peer does not read: our Write blocks
			start := time.Now()
			if err := cli.Close(); err != nil {
				t.Fatal(err)
			}
			d := time.Since(start)
			if err := <-werr; !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Write ended by Close: %v", err)
			}
			srv.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, err := io.Copy(io.Discard, srv)
			if linger == 0 {
				abrupt = append(abrupt, d)
				if isTimeoutErr(err) {
					t.Fatalf("the peer's Read after Close: %v", err)
				}
				continue
			}
			// The peer got everything Close waited for, then the end.
			live = append(live, d)
			if err != nil {
				t.Fatalf("the peer's Read after Close: %v", err)
			}
		}
	}
	t.Logf("Close with a live peer: %v (median %v); without waiting: %v (median %v)", live, median(live), abrupt, median(abrupt))
	if m, m0 := median(live), median(abrupt); m > m0+100*time.Millisecond {
		t.Errorf("Close with a live peer took %v, %v without waiting (medians of %d)", m, m0, tries)
	}

	for _, tc := range []struct {
		name  string
		setup func(c *Conn)
		max   time.Duration // what Close may take, without the slack
	}{
		{"default linger", func(*Conn) {}, DefaultFailureBound}, // the peer silent for the bound
		{"linger 0", func(c *Conn) { c.SetLinger(0) }, 0},
		{"linger 10s, write deadline 200ms", func(c *Conn) {
			c.SetLinger(10)
			c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		}, 200 * time.Millisecond},
	} {
		cli, srv := rsPair(t, l, &Dialer{KeepAlive: -1})
		if _, err := cli.Write([]byte("before")); err != nil {
			t.Fatal(err)
		}
		killQP(t, srv)
		tc.setup(cli)
		start := time.Now()
		err := cli.Close()
		d := time.Since(start)
		t.Logf("Close with a dead peer, %s: %v (%v)", tc.name, d, err)
		// The slack is for freeing the QP and the rest on a loaded
		// emulated guest (it saw 450ms).
		if d > tc.max+time.Second {
			t.Errorf("Close with a dead peer, %s: %v, want at most %v", tc.name, d, tc.max)
		}
	}
}

// TestIntegrationRSDeadlinePolling: a deadline fires on time while a
// Read or a Write polls the CQ: with a polling time of 200ms, a 5ms
// deadline ends the call within a few ms of it, not at the end of the
// polling, 195ms late. The bound, 25ms on the median of 7, leaves room
// for a loaded emulated guest (it saw up to 13ms; on a host, tens of µs).
func TestIntegrationRSDeadlinePolling(t *testing.T) {
	l, _ := rsListen(t)
	cli, _ := rsPair(t, l, &Dialer{PollTime: 200 * time.Millisecond})
	const tries = 7
	late := func(what string, call func() error, set func(time.Time) error) {
		var ds []time.Duration
		for range tries {
			dl := time.Now().Add(5 * time.Millisecond)
			set(dl)
			err := call()
			ds = append(ds, time.Since(dl))
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("%s: %v", what, err)
			}
		}
		t.Logf("%s past a 5ms deadline while polling 200ms: %v (median %v)", what, ds, median(ds))
		if m := median(ds); m > 25*time.Millisecond {
			t.Errorf("%s ended %v after its deadline (median of %d)", what, m, tries)
		}
	}
	b := make([]byte, 64<<10)
	late("Read", func() error { _, err := cli.Read(b); return err }, cli.SetReadDeadline)
	cli.SetReadDeadline(time.Time{})
	// Fill the peer's buffer (it does not read), then time the blocked
	// Writes.
	cli.SetWriteDeadline(time.Now().Add(time.Second))
	for {
		if _, err := cli.Write(b); err != nil {
			break
		}
	}
	late("Write", func() error { _, err := cli.Write(b); return err }, cli.SetWriteDeadline)
}

// TestIntegrationRSDropped: over 1000 Conns (200 in one batch under the
// race detector) dropped without Close (both ends of most pairs; only
// the dialled end of every tenth, whose accepted end is closed) are
// reclaimed by the garbage collector: no QP, MR, cm_id, fd or goroutine
// is left.
func TestIntegrationRSDropped(t *testing.T) {
	l := rsListenNoLeaks(t)
	g0 := runtime.NumGoroutine()
	const perBatch = 106 // 201 Conns: 95 pairs and 11 dialled ends
	batches := 5
	if testenv.Race {
		batches = 1
	}
	dropped := 0
	start := time.Now()
	for batch := range batches {
		for i := range perBatch {
			cli, srv, err := rsPairErr(l, nil)
			if err != nil {
				t.Fatalf("batch %d, pair %d: %v", batch, i, err)
			}
			if _, err := cli.Write([]byte{1}); err != nil {
				t.Fatal(err)
			}
			dropped++
			if i%10 == 0 {
				if err := srv.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				dropped++
			}
		}
		// Each live Conn has goroutines: when they are gone, so are the
		// Conns (and checkNoLeaks looks at the rest).
		for deadline := time.Now().Add(60 * time.Second); runtime.NumGoroutine() > g0; {
			if time.Now().After(deadline) {
				t.Fatalf("batch %d: %d goroutines left after dropping Conns", batch, runtime.NumGoroutine()-g0)
			}
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
	}
	if dropped != batches*201 {
		t.Fatalf("dropped %d Conns", dropped)
	}
	t.Logf("%d Conns dropped and reclaimed in %v", dropped, time.Since(start))
}

// TestIntegrationRSFailWakes: when the connection fails, a blocked Read
// and a blocked Write both return its error at once: a keepalive that
// cannot be posted (our QP reset under the Conn), a peer gone without
// its DISCONNECT, a peer that breaks the protocol. (A peer that is gone
// without a word is never noticed on rxe: with rdma_cm's retry count of
// 7, which rsockets asks for, rxe retransmits for ever.)
func TestIntegrationRSFailWakes(t *testing.T) {
	l := rsListenNoLeaks(t)
	for _, tc := range []struct {
		name   string
		inject func(cli, srv *Conn)
		want   error
	}{
		{"keepalive post fails", func(cli, _ *Conn) {
			if err := cli.id.QP().Modify(&uverbs.QPAttr{State: ib.QPStateReset}, uverbs.QPAttrState); err != nil {
				t.Fatal(err)
			}
		}, nil},
		// A killed peer's kernel destroys its id: a DREQ without the
		// DISCONNECT message.
		{"peer gone", func(_, srv *Conn) {
			killQP(t, srv)
			if err := srv.id.Disconnect(); err != nil {
				t.Fatal(err)
			}
		}, unix.ECONNRESET},
		{"peer breaks the protocol", func(_, srv *Conn) {
			srv.mu.Lock()
			srv.postCtrl(rsproto.MakeMsg(5, 0))
			srv.mu.Unlock()
		}, rsproto.ErrMalformed},
	} {
		cli, srv := rsPair(t, l, &Dialer{KeepAlive: 20 * time.Millisecond})
		rerr := make(chan error, 1)
		go func() {
			_, err := cli.Read(make([]byte, 1))
			rerr <- err
		}()
		werr := fill(cli)
		start := time.Now()
		tc.inject(cli, srv)
		for what, ch := range map[string]<-chan error{"Read": rerr, "Write": werr} {
			select {
			case err := <-ch:
				if err == nil || errors.Is(err, net.ErrClosed) || isTimeoutErr(err) || tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("%s: %s ended by %v", tc.name, what, err)
				}
				t.Logf("%s: %s returned after %v: %v", tc.name, what, time.Since(start), err)
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: %s still blocked after 30s", tc.name, what)
			}
		}
	}
}

// TestIntegrationRSBadPeer: a peer that sends what rsockets never sends
// (an unknown operation or control message, more data than half the
// buffer, credits beyond its receive queue) gets its connection closed:
// our Read fails with an error matching rsproto.ErrMalformed and
// unix.EPROTO, and the peer sees the disconnect. A peer that points our
// writes outside its buffer (its target SGL entry) fails them with a
// completion error, and nothing here is touched.
func TestIntegrationRSBadPeer(t *testing.T) {
	l := rsListenNoLeaks(t)
	// A bystander on the same listener, which the bad peers must not touch.
	bc, bs := rsPair(t, l, &Dialer{KeepAlive: -1})
	for _, tc := range []struct {
		name string
		msg  rsproto.Msg
	}{
		{"reserved op", rsproto.MakeMsg(5, 1)},
		{"unknown control", rsproto.MakeMsg(rsproto.OpCtrl, 9)},
		{"data beyond the buffer", rsproto.MakeMsg(rsproto.OpData, rsproto.DataMask)},
		{"credits beyond the window", rsproto.MakeMsg(rsproto.OpSGL, 30000)},
	} {
		cli, srv := rsPair(t, l, &Dialer{KeepAlive: -1})
		srv.mu.Lock()
		srv.postCtrl(tc.msg)
		srv.mu.Unlock()
		cli.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err := cli.Read(make([]byte, 1))
		if !errors.Is(err, rsproto.ErrMalformed) || !errors.Is(err, unix.EPROTO) {
			t.Errorf("%s: Read: %v", tc.name, err)
		}
		srv.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := srv.Read(make([]byte, 1)); !errors.Is(err, unix.ECONNRESET) && !errors.Is(err, unix.EIO) {
			t.Errorf("%s: the bad peer's Read: %v", tc.name, err)
		}
	}

	// The peer's buffer entry points elsewhere in its memory.
	cli, srv := rsPair(t, l, &Dialer{KeepAlive: -1})
	cli.mu.Lock()
	cli.putTarget(cli.flow.targetSGE, rsproto.SGE{Addr: 0x10, Key: srv.res.rmr.RKey(), Length: 1 << 20})
	cli.mu.Unlock()
	cli.SetDeadline(time.Now().Add(20 * time.Second))
	cli.Write([]byte("stray"))
	_, err := cli.Read(make([]byte, 1))
	var ce *CompletionError
	if !errors.As(err, &ce) || !errors.Is(err, unix.EIO) {
		t.Errorf("writing outside the peer's buffer: Read: %v", err)
	}

	// The bystander still moves data both ways.
	bc.SetDeadline(time.Now().Add(20 * time.Second))
	bs.SetDeadline(time.Now().Add(20 * time.Second))
	for _, p := range [][2]*Conn{{bc, bs}, {bs, bc}} {
		if _, err := p[0].Write([]byte("still here")); err != nil {
			t.Fatalf("bystander Write: %v", err)
		}
		got := make([]byte, len("still here"))
		if _, err := io.ReadFull(p[1], got); err != nil || string(got) != "still here" {
			t.Fatalf("bystander Read: %q, %v", got, err)
		}
	}
}
