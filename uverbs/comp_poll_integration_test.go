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

// pollPair is a connected pair whose receiving CQ's channel polls.
type pollPair struct {
	e    *env
	a, b *uverbs.QP
	cb   *cq
	id   uint64
}

func newPollPair(t *testing.T, e *env, d time.Duration) *pollPair {
	a, b, _, cb := e.pair(t, qpOpts{})
	cb.ch.SetPollTime(d)
	return &pollPair{e: e, a: a, b: b, cb: cb}
}

// send sends one message from a to b.
func (p *pollPair) send(t *testing.T) {
	t.Helper()
	p.id++
	if err := p.b.PostRecv(&uverbs.RecvWR{ID: p.id, SGE: []uverbs.SGE{p.e.sge(4096, 64)}}); err != nil {
		t.Fatal(err)
	}
	if err := p.a.PostSend(&uverbs.SendWR{ID: p.id, Opcode: uverbs.OpSend, SGE: []uverbs.SGE{p.e.sge(0, 64)}}); err != nil {
		t.Fatal(err)
	}
}

// prime reads an event (so that the next wait may poll), takes its
// completion and arms the CQ again, as an event loop does.
func (p *pollPair) prime(t *testing.T) {
	t.Helper()
	if err := p.cb.RequestNotify(false); err != nil {
		t.Fatal(err)
	}
	p.send(t)
	if err := p.cb.waitEvent(t, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	var wc [1]uverbs.WC
	for end := time.Now().Add(5 * time.Second); ; {
		n, err := p.cb.Poll(wc[:])
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			checkWC(t, wc[0], p.id, uverbs.WCRecv, uverbs.WCSuccess)
			break
		}
		if time.Now().After(end) {
			t.Fatal("the event's completion is not in the CQ")
		}
	}
	if err := p.cb.RequestNotify(false); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationCompChannelPoll: a channel with a poll time, waiting
// right after an event (so polling before it parks), gets the next event;
// cancellation, a deadline and Close end the polling wait with the error
// that says which; and polling is bounded: a wait polls at most its poll
// time, and one after a quiet spell does not poll at all (the CPU the
// process spends over idle waits, a generous bound, not a timing).
func TestIntegrationCompChannelPoll(t *testing.T) {
	e := newEnv(t)
	p := newPollPair(t, e, 20*time.Millisecond)
	p.prime(t)
	for i, bound := range []time.Duration{150 * time.Millisecond, 60 * time.Millisecond} {
		cpu0 := testenv.SelfCPU(t)
		if got, err := p.cb.ch.GetEvent(within(t, 300*time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("idle wait %d: %v, %v", i, got, err)
		}
		if cpu := testenv.SelfCPU(t) - cpu0; cpu > bound {
			t.Fatalf("idle wait %d of 300 ms with a 20 ms poll time cost %v of CPU, more than %v", i, cpu, bound)
		}
	}

	// From here on every wait polls throughout.
	p.cb.ch.SetPollTime(time.Hour)
	p.prime(t)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		time.Sleep(20 * time.Millisecond)
		p.send(t)
	}()
	if got, err := p.cb.ch.GetEvent(within(t, 5*time.Second)); err != nil || got != p.cb.CQ {
		t.Fatalf("polling GetEvent: %v, %v; want %v", got, err, p.cb.CQ)
	}
	p.cb.AckEvents(1)
	<-sent
	checkWC(t, p.cb.wait(t, 1)[0], p.id, uverbs.WCRecv, uverbs.WCSuccess)

	p.prime(t)
	start := time.Now()
	if _, err := p.cb.ch.GetEvent(within(t, 50*time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) ||
		!errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("polling GetEvent past its deadline: %v after %v", err, time.Since(start))
	}
	p.prime(t)
	ctx, cancel := context.WithCancel(context.Background())
	woken(t, "cancelled polling GetEvent", func() error { _, err := p.cb.ch.GetEvent(ctx); return err }, cancel, context.Canceled)
	p.prime(t)
	woken(t, "polling GetEvent on a closed channel", func() error { _, err := p.cb.ch.GetEvent(context.Background()); return err },
		func() { p.cb.ch.Close() }, os.ErrClosed)
}

// TestIntegrationPollingWaitsKeepRuntimeResponsive is
// TestIntegrationWaitsKeepRuntimeResponsive for waits that poll (each
// right after an event, with a poll time longer than the test): they
// yield, so that with GOMAXPROCS=1 a 1 ms sleep elsewhere is not
// stretched and a garbage collection stops them at once
// (testenv.RequireYielding).
func TestIntegrationPollingWaitsKeepRuntimeResponsive(t *testing.T) {
	for _, n := range []int{1, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t)
			var ps []*pollPair
			for range n {
				p := newPollPair(t, e, time.Hour)
				p.prime(t)
				ps = append(ps, p)
			}
			var wg sync.WaitGroup
			t.Cleanup(func() {
				for _, p := range ps {
					p.cb.ch.Close()
				}
				wg.Wait()
			})
			testenv.RequireYielding(t, fmt.Sprintf("%d polling completion-event waiters", n), func() {
				for _, p := range ps {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if cq, err := p.cb.ch.GetEvent(context.Background()); !errors.Is(err, os.ErrClosed) {
							t.Errorf("wait for an event that never comes: %v, %v", cq, err)
						}
					}()
				}
			})
			// Still polling: the CPU goes on being spent (parked, they
			// would spend next to none).
			cpu0 := testenv.SelfCPU(t)
			for end := time.Now().Add(5 * time.Second); testenv.SelfCPU(t)-cpu0 < 20*time.Millisecond; time.Sleep(time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("the waiters spent %v of CPU in 5 s: they were not polling", testenv.SelfCPU(t)-cpu0)
				}
			}
		})
	}
}
