package uverbs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationWaitsKeepRuntimeResponsive: with GOMAXPROCS=1, 1 and 8
// goroutines waiting for completion events (each on its own channel with
// an armed CQ) or async events (each on its own context) that never come
// leave the scheduler and the collector alone: they are parked in the
// netpoller and hold no P.
func TestIntegrationWaitsKeepRuntimeResponsive(t *testing.T) {
	for _, n := range []int{1, 8} {
		t.Run(fmt.Sprintf("comp-channel/%d", n), func(t *testing.T) {
			e := newEnv(t)
			var cqs []*cq
			for range n {
				q := e.newCQ(t, 4)
				if err := q.RequestNotify(false); err != nil {
					t.Fatal(err)
				}
				cqs = append(cqs, q)
			}
			var wg sync.WaitGroup
			t.Cleanup(func() {
				for _, q := range cqs {
					q.ch.Close()
				}
				wg.Wait()
			})
			testenv.RequireResponsive(t, fmt.Sprintf("%d completion-event waiters", n), n, func() {
				for _, q := range cqs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if cq, err := q.ch.GetEvent(context.Background()); !errors.Is(err, os.ErrClosed) {
							t.Errorf("wait for an event that never comes: %v, %v", cq, err)
						}
					}()
				}
			})
		})
		t.Run(fmt.Sprintf("async/%d", n), func(t *testing.T) {
			testenv.RequireRDMA(t)
			var ctxs []*uverbs.Context
			for range n {
				c, err := uverbs.OpenName("rxe0")
				if err != nil {
					t.Fatal(err)
				}
				ctxs = append(ctxs, c)
			}
			var wg sync.WaitGroup
			t.Cleanup(func() {
				for _, c := range ctxs {
					c.Close()
				}
				wg.Wait()
			})
			testenv.RequireResponsive(t, fmt.Sprintf("%d async-event waiters", n), n, func() {
				for _, c := range ctxs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if ev, err := c.GetEvent(context.Background()); !errors.Is(err, os.ErrClosed) {
							t.Errorf("wait for an async event that never comes: %v, %v", ev, err)
						}
					}()
				}
			})
		})
	}
}

// woken runs wait in a goroutine, lets it park, calls wake, and checks
// that wait returns an error matching want: the error says what ended it.
func woken(t *testing.T, what string, wait func() error, wake func(), want error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- wait() }()
	time.Sleep(30 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("%s: the wait ended by itself: %v", what, err)
	default:
	}
	// The waits have no deadline of their own (or one far off), so only
	// wake can end them; how fast is not timed: under the race detector a
	// context's Close, which wake may be, takes more than 10 ms itself.
	wake()
	select {
	case err := <-done:
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not woken", what)
	}
}

// TestIntegrationWaitsWoken: cancellation, a deadline and Close each end
// a wait for completion events and for async events, with the error
// that says which.
func TestIntegrationWaitsWoken(t *testing.T) {
	e := newEnv(t)
	q := e.newCQ(t, 4)
	if err := q.RequestNotify(false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	woken(t, "cancelled GetEvent", func() error { _, err := q.ch.GetEvent(ctx); return err }, cancel, context.Canceled)
	ctx, cancel = context.WithCancel(context.Background())
	woken(t, "cancelled GetEvent", func() error { _, err := e.c.GetEvent(ctx); return err }, cancel, context.Canceled)

	start := time.Now()
	if _, err := q.ch.GetEvent(within(t, 50*time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) ||
		!errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("GetEvent past its deadline: %v after %v", err, time.Since(start))
	}
	if _, err := e.c.GetEvent(within(t, 20*time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("GetEvent past its deadline: %v", err)
	}

	// Close wakes every waiter of a channel.
	ch, err := e.c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	var errs [3]error
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = ch.GetEvent(context.Background()) }()
	}
	woken(t, "GetEvent on a closed channel", func() error { _, err := ch.GetEvent(context.Background()); return err },
		func() { ch.Close() }, os.ErrClosed)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("waiter %d of a closed channel: %v", i, err)
		}
	}
	if _, err := ch.GetEvent(context.Background()); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("GetEvent after Close: %v", err)
	}

	c2, err := uverbs.OpenName("rxe0")
	if err != nil {
		t.Fatal(err)
	}
	woken(t, "GetEvent on a closed context", func() error { _, err := c2.GetEvent(context.Background()); return err },
		func() { c2.Close() }, os.ErrClosed)
}

// TestIntegrationGetEvent: an armed CQ's completion raises one event that
// names the CQ; GetEvent counts it until AckEvents; an unarmed CQ raises
// none.
func TestIntegrationGetEvent(t *testing.T) {
	e := newEnv(t)
	a, b, _, cb := e.pair(t, qpOpts{})
	send := func(id uint64) {
		t.Helper()
		if err := b.PostRecv(&uverbs.RecvWR{ID: id, SGE: []uverbs.SGE{e.sge(4096, 64)}}); err != nil {
			t.Fatal(err)
		}
		if err := a.PostSend(&uverbs.SendWR{ID: id, Opcode: uverbs.OpSend, SGE: []uverbs.SGE{e.sge(0, 64)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cb.RequestNotify(false); err != nil {
		t.Fatal(err)
	}
	send(1)
	got, err := cb.ch.GetEvent(within(t, 5*time.Second))
	if err != nil || got != cb.CQ {
		t.Fatalf("GetEvent: %v, %v; want %v", got, err, cb.CQ)
	}
	if cb.UnackedEvents() != 1 {
		t.Fatalf("%d unacknowledged events, want 1", cb.UnackedEvents())
	}
	cb.AckEvents(1)
	if cb.UnackedEvents() != 0 {
		t.Fatalf("%d unacknowledged events after AckEvents", cb.UnackedEvents())
	}
	checkWC(t, cb.wait(t, 1)[0], 1, uverbs.WCRecv, uverbs.WCSuccess)

	// Not armed: the completion comes, its event does not.
	send(2)
	var wc [1]uverbs.WC
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if n, err := cb.Poll(wc[:]); err != nil || n == 1 {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(end) {
			t.Fatal("no completion after 5 s")
		}
	}
	checkWC(t, wc[0], 2, uverbs.WCRecv, uverbs.WCSuccess)
	time.Sleep(20 * time.Millisecond)
	if got, ok, err := cb.ch.TryGetEvent(); ok || err != nil {
		t.Fatalf("TryGetEvent with no event: %v, %v, %v", got, ok, err)
	}
}

// TestIntegrationGetEventStale: a CQ armed, polled without waiting and
// armed again can have two events queued, and a wait must find both
// without parking (the channel's hint that lets a wait skip its first
// read must not hide them).
func TestIntegrationGetEventStale(t *testing.T) {
	e := newEnv(t)
	a, b, _, cb := e.pair(t, qpOpts{})
	var wc [1]uverbs.WC
	for id := uint64(1); id <= 2; id++ {
		if err := cb.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		if err := b.PostRecv(&uverbs.RecvWR{ID: id, SGE: []uverbs.SGE{e.sge(4096, 64)}}); err != nil {
			t.Fatal(err)
		}
		if err := a.PostSend(&uverbs.SendWR{ID: id, Opcode: uverbs.OpSend, SGE: []uverbs.SGE{e.sge(0, 64)}}); err != nil {
			t.Fatal(err)
		}
		// Take the completion by polling, as a busy program does, and
		// leave its event queued.
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			n, err := cb.Poll(wc[:])
			if err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				break
			}
			if time.Now().After(end) {
				t.Fatal("no completion after 5 s")
			}
		}
	}
	time.Sleep(20 * time.Millisecond) // both events are queued by now
	for i := range 2 {
		got, err := cb.ch.GetEvent(within(t, 5*time.Second))
		if err != nil || got != cb.CQ {
			t.Fatalf("stale event %d: %v, %v", i, got, err)
		}
		cb.AckEvents(1)
	}
	if _, ok, err := cb.ch.TryGetEvent(); ok || err != nil {
		t.Fatalf("a third event: %v, %v", ok, err)
	}
}
