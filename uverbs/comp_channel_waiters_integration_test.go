package uverbs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationCompChannelConcurrentWaiters: 8 goroutines wait on one
// completion channel that 3 or 8 CQs report to (3: the channel's wait
// hint is used; 8: too many CQs for it). In each of 50 rounds every CQ
// is armed and gets one completion (a signaled RDMA WRITE from its own
// QP), so the channel carries exactly one event per CQ per round: each
// is delivered exactly once, to one waiter, none lost and none twice.
// Close then wakes every waiter with os.ErrClosed.
func TestIntegrationCompChannelConcurrentWaiters(t *testing.T) {
	for _, ncq := range []int{3, 8} {
		t.Run(fmt.Sprint(ncq), func(t *testing.T) { concurrentWaiters(t, ncq) })
	}
}

func concurrentWaiters(t *testing.T, ncq int) {
	e := newEnv(t)
	const nwait, rounds = 8, 50
	ch, err := e.c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	peerCQ := e.newCQ(t, 64) // the peers' completions, never read
	cqs := make([]*uverbs.CQ, ncq)
	qps := make([]*uverbs.QP, ncq)
	index := map[*uverbs.CQ]int{}
	for i := range cqs {
		x, err := e.c.CreateCQ(uverbs.CQAttr{CQE: 16, CompChannel: ch})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		cqs[i], index[x] = x, i
		qps[i] = e.newQP(t, &cq{x, ch}, peerCQ, qpOpts{})
		peer := e.newQP(t, peerCQ, peerCQ, qpOpts{})
		e.connect(t, qps[i], peer.Num(), qpOpts{})
		e.connect(t, peer, qps[i].Num(), qpOpts{})
	}

	events := make(chan *uverbs.CQ, ncq*rounds)
	ended := make(chan error, nwait)
	for range nwait {
		go func() {
			for {
				cq, err := ch.GetEvent(context.Background())
				if err != nil {
					ended <- err
					return
				}
				if cq != nil {
					cq.AckEvents(1)
				}
				events <- cq
			}
		}()
	}
	var wc [4]uverbs.WC
	for round := range rounds {
		for i, cq := range cqs {
			if err := cq.RequestNotify(false); err != nil {
				t.Fatal(err)
			}
			sge := [1]uverbs.SGE{e.sge(4096*i, 64)}
			if err := qps[i].PostSend(&uverbs.SendWR{ID: uint64(round), Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled,
				SGE: sge[:], RemoteAddr: e.buf.Addr(512 << 10), RKey: e.mr.RKey()}); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]int, ncq)
		for range ncq {
			select {
			case cq := <-events:
				i, ok := index[cq]
				if !ok {
					t.Fatalf("round %d: an event for a CQ not on the channel: %v", round, cq)
				}
				got[i]++
			case <-time.After(20 * time.Second):
				t.Fatalf("round %d: events lost: per CQ %v", round, got)
			}
		}
		// Anything beyond one per CQ would be a duplicate.
		select {
		case cq := <-events:
			t.Fatalf("round %d: an event beyond one per CQ, for CQ %d (per CQ %v)", round, index[cq], got)
		case <-time.After(20 * time.Millisecond):
		}
		for i, n := range got {
			if n != 1 {
				t.Fatalf("round %d: CQ %d had %d events, want 1 (per CQ %v)", round, i, n, got)
			}
			// Its completion, so that the next round's arm starts empty.
			deadline := time.Now().Add(10 * time.Second)
			for {
				k, err := cqs[i].Poll(wc[:])
				if err != nil {
					t.Fatal(err)
				}
				if k == 1 && wc[0].Status == uverbs.WCSuccess && wc[0].ID == uint64(round) {
					break
				}
				if k != 0 || time.Now().After(deadline) {
					t.Fatalf("round %d: CQ %d: %d completions %+v", round, i, k, wc[:k])
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	for _, cq := range cqs {
		if n := cq.UnackedEvents(); n != 0 {
			t.Fatalf("a CQ has %d unacknowledged events", n)
		}
	}
	t0 := time.Now()
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	for range nwait {
		select {
		case err := <-ended:
			if !errors.Is(err, os.ErrClosed) {
				t.Fatalf("a waiter ended with %v, want os.ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not wake every waiter")
		}
	}
	t.Logf("%d events over %d waiters; Close woke them in %v", ncq*rounds, nwait, time.Since(t0))
}
