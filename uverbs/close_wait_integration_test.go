package uverbs_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// ended waits for n results on errs and checks that each came within d
// of the call that should end them and matches want.
func ended(t *testing.T, what string, errs <-chan error, n int, d time.Duration, want ...error) {
	t.Helper()
	deadline := time.After(d)
	for i := range n {
		select {
		case err := <-errs:
			ok := false
			for _, w := range want {
				ok = ok || (w == nil && err == nil) || (w != nil && errors.Is(err, w))
			}
			if !ok {
				t.Fatalf("%s: %d of %d: %v, want one of %v", what, i+1, n, err, want)
			}
		case <-deadline:
			t.Fatalf("%s: %d of %d still waiting after %v", what, n-i, n, d)
		}
	}
}

// parked starts n goroutines running wait, and checks that none has
// ended 30 ms later.
func parked(t *testing.T, what string, n int, wait func() error) <-chan error {
	t.Helper()
	errs := make(chan error, n)
	for range n {
		go func() { errs <- wait() }()
	}
	time.Sleep(30 * time.Millisecond)
	if len(errs) != 0 {
		t.Fatalf("%s: a wait ended by itself: %v", what, <-errs)
	}
	return errs
}

// TestIntegrationCloseWakesWaiters: the Close of a completion channel
// ends every GetEvent waiting on it, and the Close of a context ends
// every wait on its async events and on its completion channels, each
// with an error matching os.ErrClosed, at once; later waits and tries
// fail the same way.
func TestIntegrationCloseWakesWaiters(t *testing.T) {
	noLeaks(t)
	t.Run("channel", func(t *testing.T) {
		e := newEnv(t)
		q := e.newCQ(t, 4)
		if err := q.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		errs := parked(t, "GetEvent", 4, func() error { _, err := q.ch.GetEvent(context.Background()); return err })
		if err := q.ch.Close(); err != nil {
			t.Fatal(err)
		}
		ended(t, "GetEvent at the channel's Close", errs, 4, time.Second, os.ErrClosed)
		_, _, err := q.ch.TryGetEvent()
		wantClosed(t, "TryGetEvent on a closed channel", err)
	})
	t.Run("context", func(t *testing.T) {
		e := newEnv(t)
		q := e.newCQ(t, 4)
		other, err := e.c.CreateCompChannel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		if err := q.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		errs := parked(t, "waits", 6, func() func() error {
			var mu sync.Mutex
			i := 0
			return func() error {
				mu.Lock()
				i++
				k := i
				mu.Unlock()
				switch k % 3 {
				case 0:
					_, err := e.c.GetEvent(context.Background())
					return err
				case 1:
					_, err := q.ch.GetEvent(context.Background())
					return err
				}
				_, err := other.GetEvent(context.Background())
				return err
			}
		}())
		if err := e.c.Close(); err != nil {
			t.Fatal(err)
		}
		ended(t, "waits at the context's Close", errs, 6, time.Second, os.ErrClosed)
		_, err = other.GetEvent(context.Background())
		wantClosed(t, "GetEvent on a channel of a closed context", err)
		_, err = e.c.GetEvent(context.Background())
		wantClosed(t, "GetEvent on a closed context", err)
	})
	t.Run("cq", func(t *testing.T) {
		// A CQ's Close does not end a wait on its channel, which other
		// CQs may share; the wait ends by its context.
		e := newEnv(t)
		q := e.newCQ(t, 4)
		if err := q.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errs := parked(t, "GetEvent", 2, func() error { _, err := q.ch.GetEvent(ctx); return err })
		if err := q.CQ.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if len(errs) != 0 {
			t.Fatalf("a wait on the channel ended at the CQ's Close: %v", <-errs)
		}
		cancel()
		ended(t, "GetEvent cancelled after its CQ's Close", errs, 2, time.Second, context.Canceled)
	})
}

// TestIntegrationCloseDuringDataPath: Closes while other goroutines post,
// poll, arm and drain end those loops with an error matching os.ErrClosed
// (or, for a Drain, success), never a crash or a hang: a CQ closed under
// its pollers, a QP under its posters and a Drain, and a whole context
// under all of them. Nothing is left behind.
func TestIntegrationCloseDuringDataPath(t *testing.T) {
	noLeaks(t)
	// loop runs fn until it fails and reports the failure; a full queue
	// is not a failure.
	loop := func(fn func() error) func() error {
		return func() error {
			for {
				if err := fn(); err != nil && !errors.Is(err, uverbs.ErrQueueFull) {
					return err
				}
			}
		}
	}
	t.Run("cq", func(t *testing.T) {
		e := newEnv(t)
		for round := range 20 {
			q := e.newCQ(t, 8)
			errs := make(chan error, 3)
			wc := make([]uverbs.WC, 4)
			go func() { errs <- loop(func() error { _, err := q.Poll(wc); return err })() }()
			go func() { errs <- loop(func() error { _, err := q.Poll(make([]uverbs.WC, 1)); return err })() }()
			go func() { errs <- loop(func() error { return q.RequestNotify(round%2 == 0) })() }()
			time.Sleep(time.Duration(round%5) * time.Millisecond)
			if err := q.CQ.Close(); err != nil {
				t.Fatal(err)
			}
			ended(t, "poll and arm at the CQ's Close", errs, 3, 5*time.Second, os.ErrClosed)
		}
	})
	t.Run("qp", func(t *testing.T) {
		e := newEnv(t)
		for round := range 20 {
			a, _, ca, _ := e.pair(t, qpOpts{})
			errs := make(chan error, 3)
			wc := make([]uverbs.WC, 8)
			go func() {
				errs <- loop(func() error {
					return a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpRDMAWrite, SGE: []uverbs.SGE{e.sge(0, 64)},
						RemoteAddr: e.buf.Addr(8192), RKey: e.mr.RKey()})
				})()
			}()
			go func() { errs <- loop(func() error { return a.PostRecv(&uverbs.RecvWR{ID: 2}) })() }()
			go func() {
				errs <- loop(func() error {
					if _, err := ca.Poll(wc); err != nil {
						return err
					}
					// The CQ outlives the QP: stop once the QP is gone.
					_, err := a.Query(uverbs.QPAttrState)
					return err
				})()
			}()
			time.Sleep(time.Duration(round%5) * time.Millisecond)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			ended(t, "post and poll at the QP's Close", errs, 3, 10*time.Second, os.ErrClosed)
		}
	})
	t.Run("drain", func(t *testing.T) {
		e := newEnv(t)
		won := [2]int{}
		for round := range 20 {
			q := e.newCQ(t, 64)
			qp := e.newQP(t, q, q, qpOpts{})
			e.connect(t, qp, qp.Num(), qpOpts{})
			for i := range 8 {
				if err := qp.PostRecv(&uverbs.RecvWR{ID: uint64(i), SGE: []uverbs.SGE{e.sge(4096, 64)}}); err != nil {
					t.Fatal(err)
				}
			}
			errs := make(chan error, 1)
			go func() { errs <- qp.Drain(context.Background(), nil) }()
			time.Sleep(time.Duration(round%4) * 500 * time.Microsecond)
			if err := qp.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errs:
				switch {
				case err == nil:
					won[0]++
				case errors.Is(err, os.ErrClosed):
					won[1]++
				default:
					t.Fatalf("round %d: drain at the QP's Close: %v", round, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: drain still waiting 10 s after its QP's Close", round)
			}
		}
		t.Logf("drain done first %d times, Close first %d times", won[0], won[1])
	})
	t.Run("context", func(t *testing.T) {
		for round := range 10 {
			e := newEnv(t)
			a, _, ca, cb := e.pair(t, qpOpts{typ: ib.QPTypeRC})
			d := e.newQP(t, cb, cb, qpOpts{})
			e.connect(t, d, d.Num(), qpOpts{})
			errs := make(chan error, 6)
			wc := make([]uverbs.WC, 8)
			go func() {
				errs <- loop(func() error {
					return a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled,
						SGE: []uverbs.SGE{e.sge(0, 64)}, RemoteAddr: e.buf.Addr(8192), RKey: e.mr.RKey()})
				})()
			}()
			go func() { errs <- loop(func() error { _, err := ca.Poll(wc); return err })() }()
			go func() { errs <- loop(func() error { return cb.RequestNotify(false) })() }()
			go func() { errs <- loop(func() error { return a.PostRecv(&uverbs.RecvWR{ID: 3}) })() }()
			go func() { _, err := cb.ch.GetEvent(context.Background()); errs <- err }()
			go func() { errs <- d.Drain(context.Background(), nil) }()
			time.Sleep(time.Duration(round%5) * time.Millisecond)
			if err := e.c.Close(); err != nil {
				t.Fatal(err)
			}
			ended(t, "the data path at the context's Close", errs, 6, 10*time.Second, os.ErrClosed, nil)
		}
	})
}
