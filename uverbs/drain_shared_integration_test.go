package uverbs_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationDrainSharedCQ: one goroutine polls a CQ that two
// connected QPs share while another drains one of them. The markers are
// recognised by whichever poll finds them, so Drain returns promptly (it
// used to wait for its context once the application's poller had taken
// them), the application never sees a marker, and every completion
// (the messages, the sends, the flushed receives) reaches the
// application's poller or Drain's handle exactly once.
func TestIntegrationDrainSharedCQ(t *testing.T) {
	e := newEnv(t)
	var toHandle, toApp int
	for round := range 10 {
		q := e.newCQ(t, 256)
		a, b := e.newQP(t, q, q, qpOpts{}), e.newQP(t, q, q, qpOpts{})
		e.connect(t, a, b.Num(), qpOpts{})
		e.connect(t, b, a.Num(), qpOpts{})
		type key struct {
			qpn uint32
			id  uint64
		}
		want := map[key]uverbs.WCStatus{}
		const recvs, msgs = 24, 8
		for i := range recvs {
			if err := a.PostRecv(&uverbs.RecvWR{ID: uint64(100 + i), SGE: []uverbs.SGE{e.sge(4096+64*i, 64)}}); err != nil {
				t.Fatal(err)
			}
			st := uverbs.WCWRFlushErr
			if i < msgs {
				st = uverbs.WCSuccess
			}
			want[key{a.Num(), uint64(100 + i)}] = st
		}
		var mu sync.Mutex
		got := map[key]uverbs.WCStatus{}
		record := func(w uverbs.WC) {
			mu.Lock()
			defer mu.Unlock()
			k := key{w.QPNum, w.ID}
			if _, dup := got[k]; dup {
				t.Errorf("round %d: completion %+v handed over twice", round, w)
			}
			if w.ID == uverbs.DrainWRID || w.ID == uverbs.DrainWRID+1 {
				t.Errorf("round %d: a drain marker reached the application: %+v", round, w)
			}
			got[k] = w.Status
		}
		// The application's poller.
		var stop atomic.Bool
		var appGot atomic.Int64
		polled := make(chan error, 1)
		go func() {
			wc := make([]uverbs.WC, 8)
			for !stop.Load() {
				n, err := q.Poll(wc)
				if err != nil {
					polled <- err
					return
				}
				for _, w := range wc[:n] {
					record(w)
				}
				appGot.Add(int64(n))
				if n == 0 {
					time.Sleep(20 * time.Microsecond)
				}
			}
			polled <- nil
		}()
		for i := range msgs {
			id := uint64(1 + i)
			if err := b.PostSend(&uverbs.SendWR{ID: id, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
				SGE: []uverbs.SGE{e.sge(0, 32)}}); err != nil {
				t.Fatal(err)
			}
			want[key{b.Num(), id}] = uverbs.WCSuccess
		}
		// Drain once the messages have landed, so that a's receives
		// that remain are the ones flushed.
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n := 0
			for k := range got {
				if k.qpn == a.Num() {
					n++
				}
			}
			mu.Unlock()
			if n == msgs {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d of %d messages received", round, n, msgs)
			}
			time.Sleep(time.Millisecond)
		}
		var handled atomic.Int64
		start := time.Now()
		err := a.Drain(within(t, 10*time.Second), func(w uverbs.WC) { handled.Add(1); record(w) })
		took := time.Since(start)
		if err != nil {
			t.Fatalf("round %d: drain beside a poller: %v after %v", round, err, took)
		}
		if took > 2*time.Second {
			t.Fatalf("round %d: drain beside a poller took %v", round, took)
		}
		// Whatever Drain found is in; the poller takes the rest.
		for time.Now().Before(deadline) {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n >= len(want) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		stop.Store(true)
		if err := <-polled; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		for k, st := range want {
			if g, ok := got[k]; !ok || g != st {
				t.Errorf("round %d: completion of qp %d id %d: %v (got it: %v), want %v", round, k.qpn, k.id, g, ok, st)
			}
		}
		if len(got) != len(want) {
			t.Errorf("round %d: %d completions, want %d", round, len(got), len(want))
		}
		mu.Unlock()
		if n, _ := q.Poll(make([]uverbs.WC, 4)); n != 0 {
			t.Fatalf("round %d: %d completions left", round, n)
		}
		toHandle += int(handled.Load())
		toApp += int(appGot.Load())
		if t.Failed() {
			return
		}
	}
	t.Logf("completions to the application's poller %d, to Drain's handle %d", toApp, toHandle)
}
