package uverbs

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// hintKernel models what rxe and uverbs do with a completion channel
// (rxe_cq_post, ib_uverbs_comp_handler): an arm sets a CQ's notify flag,
// the next completion clears it and queues one event.
type hintKernel struct {
	mu     sync.Mutex
	notify map[*CQ]bool
	queue  []*CQ
}

// hintOps is a CQ's provider over the model: requestNotify is the
// doorbell, produced the completions written.
type hintOps struct {
	k     *hintKernel
	cq    *CQ
	count atomic.Uint32
	ring  chan struct{} // when set, requestNotify waits for it before the doorbell
}

func (o *hintOps) requestNotify(bool) error {
	if o.ring != nil {
		<-o.ring
	}
	o.k.mu.Lock()
	defer o.k.mu.Unlock()
	o.k.notify[o.cq] = true
	return nil
}
func (o *hintOps) produced() uint32 { return o.count.Load() }
func (o *hintOps) resized() error   { return nil }
func (o *hintOps) release() error   { return nil }

// complete writes a completion to cq, raising its event if it is armed.
func (k *hintKernel) complete(cq *CQ) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cq.ops.(*hintOps).count.Add(1)
	if k.notify[cq] {
		k.notify[cq] = false
		k.queue = append(k.queue, cq)
	}
}

// read is one read(2) of the channel: the event at the head, or nil.
func (k *hintKernel) read() *CQ {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.queue) == 0 {
		return nil
	}
	cq := k.queue[0]
	k.queue = k.queue[1:]
	return cq
}

func (k *hintKernel) queued() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.queue)
}

// newHintChannel is a channel with n CQs over a model kernel, without
// fds: the tests call the hooks waitfd calls, as waitfd calls them.
func newHintChannel(n int) (*hintKernel, *CompChannel, []*CQ) {
	k := &hintKernel{notify: map[*CQ]bool{}}
	c := &Context{objects: map[uint64]any{}}
	ch := &CompChannel{ctx: c}
	ch.cqs.Store(new([]*CQ))
	var cqs []*CQ
	for i := range n {
		cq := &CQ{object: object{ctx: c, kind: "cq", handle: uint32(i)}, channel: ch, userHandle: uint64(i + 1)}
		cq.ops = &hintOps{k: k, cq: cq}
		c.objects[cq.userHandle] = cq
		ch.bind(cq, true)
		cqs = append(cqs, cq)
	}
	return k, ch, cqs
}

// gotEvent is what GetEvent does with an event read for cq.
func gotEvent(t *testing.T, ch *CompChannel, cq *CQ) {
	t.Helper()
	got, err := ch.event(abi.CompEventDesc{CqHandle: cq.userHandle}, 8, 8, nil)
	if err != nil || got != cq {
		t.Fatalf("event for cq %d: %v, %v", cq.handle, got, err)
	}
}

// TestCompChannelHintArmDuringEmpty: an arm counted between a read that
// found the channel empty and the bookkeeping of that read must not be
// absorbed: its event is queued later, and a wait that skipped the read
// would sleep on it.
func TestCompChannelHintArmDuringEmpty(t *testing.T) {
	k, ch, cqs := newHintChannel(1)
	cq := cqs[0]
	ch.readers.Add(1)
	if err := cq.RequestNotify(false); err != nil { // arm A
		t.Fatal(err)
	}
	ch.mayHaveEvent() // the wait's first hook, then its read(2) finds nothing
	if k.read() != nil {
		t.Fatal("event before any completion")
	}
	// Before the reader tells the channel so: A fires, B is armed and
	// fires.
	k.complete(cq)
	if err := cq.RequestNotify(false); err != nil {
		t.Fatal(err)
	}
	k.complete(cq)
	ch.empty()
	if got := k.read(); got != cq {
		t.Fatalf("read %v", got)
	}
	gotEvent(t, ch, cq)
	if k.queued() != 1 {
		t.Fatalf("%d events queued, want B's", k.queued())
	}
	if !ch.mayHaveEvent() {
		t.Fatal("the hint says nothing is queued while B's event is")
	}
}

// TestCompChannelHintLaggingReader: a reader that read an event before
// another reader found the channel empty, and counts it only after that
// reader's bookkeeping, must not take the bound below what is queued.
func TestCompChannelHintLaggingReader(t *testing.T) {
	k, ch, cqs := newHintChannel(1)
	cq := cqs[0]
	if err := cq.RequestNotify(false); err != nil { // A
		t.Fatal(err)
	}
	k.complete(cq)                                  // A fires
	if err := cq.RequestNotify(false); err != nil { // B, pending
		t.Fatal(err)
	}
	ch.readers.Add(2)
	ch.mayHaveEvent() // reader 1's wait
	if k.read() != cq {
		t.Fatal("no event for A")
	}
	// Reader 1 has given the turn back; reader 2 finds nothing.
	ch.mayHaveEvent()
	if k.read() != nil {
		t.Fatal("a second event")
	}
	ch.empty()
	gotEvent(t, ch, cq) // reader 1 counts A's event only now
	ch.readers.Add(-1)
	k.complete(cq) // B fires
	if !ch.mayHaveEvent() {
		t.Fatal("the hint says nothing is queued while B's event is")
	}
}

// TestCompChannelHintArmInFlight: an arm counted before a read that
// found the channel empty, whose doorbell comes after it, can still raise
// an event after the pending arm's.
func TestCompChannelHintArmInFlight(t *testing.T) {
	k, ch, cqs := newHintChannel(1)
	cq := cqs[0]
	ops := cq.ops.(*hintOps)
	ch.readers.Add(1)
	if err := cq.RequestNotify(false); err != nil { // A, pending
		t.Fatal(err)
	}
	ops.ring = make(chan struct{})
	armed := make(chan error)
	go func() { armed <- cq.RequestNotify(false) }() // B: counted, its doorbell held back
	for cq.hint.armsMade.Load() != 2 {
		time.Sleep(time.Millisecond)
	}
	ch.mayHaveEvent()
	if k.read() != nil {
		t.Fatal("event before any completion")
	}
	ch.empty()
	k.complete(cq) // A fires
	ops.ring <- struct{}{}
	if err := <-armed; err != nil {
		t.Fatal(err)
	}
	ops.ring = nil
	k.complete(cq) // B fires
	if k.read() != cq {
		t.Fatal("no event for A")
	}
	gotEvent(t, ch, cq)
	ch.mayHaveEvent()
	if k.queued() != 1 {
		t.Fatalf("%d events queued, want B's", k.queued())
	}
	// What the hint says now must cover B's event.
	if cq.hint.bound.Load() < 1 {
		t.Fatalf("bound %d with B's event queued", cq.hint.bound.Load())
	}
	if !ch.mayHaveEvent() {
		t.Fatal("the hint says nothing is queued while B's event is")
	}
}

// TestCompChannelHintTight: one reader waiting for one armed CQ at a
// time, the channel's usual life, keeps the hint useful: after each
// event and each empty read, a fresh arm without a completion says
// nothing is queued.
func TestCompChannelHintTight(t *testing.T) {
	k, ch, cqs := newHintChannel(2)
	for range 100 {
		for _, cq := range cqs {
			if err := cq.RequestNotify(false); err != nil {
				t.Fatal(err)
			}
		}
		ch.readers.Add(1)
		if ch.mayHaveEvent() {
			t.Fatal("the hint asks for a read with no completion since the arms")
		}
		k.complete(cqs[1])
		if ch.mayHaveEvent() != true || k.read() != cqs[1] {
			t.Fatal("no event for the completion")
		}
		gotEvent(t, ch, cqs[1])
		if k.read() != nil {
			t.Fatal("a second event")
		}
		ch.empty()
		ch.readers.Add(-1)
		// cqs[0] stays armed, with no completion: re-arming cqs[1] gives
		// a channel with nothing queued again.
		if err := cqs[1].RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		ch.readers.Add(1)
		if ch.mayHaveEvent() {
			t.Fatalf("bounds %d, %d: the hint asks for a read with nothing queued",
				cqs[0].hint.bound.Load(), cqs[1].hint.bound.Load())
		}
		ch.readers.Add(-1)
		k.complete(cqs[0])
		k.complete(cqs[1])
		for range 2 {
			cq := k.read()
			if cq == nil {
				t.Fatal("an event is missing")
			}
			gotEvent(t, ch, cq)
		}
	}
}

// TestCompChannelHintConcurrent runs arms, completions and readers on a
// model kernel at once (with -race), readers serialized as waitfd's turn
// serializes them and counting their events after giving the turn back,
// and checks at every wait's first hook that the hint never says
// "nothing" while an event is queued.
func TestCompChannelHintConcurrent(t *testing.T) {
	k, ch, cqs := newHintChannel(3)
	var turn sync.Mutex
	var stop atomic.Bool
	var wrong, waits, reads atomic.Int64
	var wg sync.WaitGroup
	spawn := func(fn func(r *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(rand.Uint64(), 0))
			for !stop.Load() {
				fn(r)
			}
		}()
	}
	for range 2 {
		spawn(func(r *rand.Rand) {
			if err := cqs[r.IntN(len(cqs))].RequestNotify(false); err != nil {
				t.Error(err)
			}
			if r.IntN(4) == 0 {
				time.Sleep(time.Duration(r.IntN(20)) * time.Microsecond)
			}
		})
	}
	spawn(func(r *rand.Rand) {
		k.complete(cqs[r.IntN(len(cqs))])
		if r.IntN(4) == 0 {
			time.Sleep(time.Duration(r.IntN(20)) * time.Microsecond)
		}
	})
	for range 4 {
		spawn(func(r *rand.Rand) {
			ch.readers.Add(1)
			defer ch.readers.Add(-1)
			turn.Lock()
			before := k.queued()
			if !ch.mayHaveEvent() && before > 0 {
				wrong.Add(1)
			}
			waits.Add(1)
			cq := k.read()
			if cq == nil {
				if r.IntN(2) == 0 {
					time.Sleep(time.Duration(r.IntN(5)) * time.Microsecond)
				}
				ch.empty()
				turn.Unlock()
				return
			}
			turn.Unlock()
			if r.IntN(2) == 0 {
				time.Sleep(time.Duration(r.IntN(20)) * time.Microsecond)
			}
			reads.Add(1)
			if _, err := ch.event(abi.CompEventDesc{CqHandle: cq.userHandle}, 8, 8, nil); err != nil {
				t.Error(err)
			}
		})
	}
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()
	if reads.Load() == 0 {
		t.Fatalf("no event read in %d waits", waits.Load())
	}
	if n := wrong.Load(); n != 0 {
		t.Fatalf("%d of %d waits would have slept over a queued event (%d events read)", n, waits.Load(), reads.Load())
	}
}
