package uverbs

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/waitfd"
)

// DrainWRID and DrainWRID+1 are reserved work request IDs: those of the
// send and receive markers Drain posts. Other work requests must not use
// them. While a Drain waits, Poll keeps its markers out of its results;
// a caller polling the CQs after a Drain that ended early (its ctx done)
// may still find them, as completions of the QP with these IDs, and
// should skip them.
const DrainWRID = 0xffff_ffff_ffff_d4a0

// Drain moves the QP to the error state and waits until every work
// request posted to it has completed, as the kernel's ib_drain_qp does:
// it posts a marker receive (without an SRQ) and a marker send, which
// complete (flushed) after everything posted before them, and waits for
// both markers. A QP in RESET has nothing to drain. Each queue needs
// room for one more work request. A QP with an SRQ drains its send queue
// only: its receives belong to the SRQ.
//
// Other goroutines may poll the QP's CQs meanwhile. As the kernel hands
// a marker to its drainer from whichever poll finds it (the marker's
// completion callback), a Poll that finds a marker of a Drain in progress
// keeps it out of its results and tells the Drain, which then returns at
// once. Drain polls the CQs itself only when no other goroutine has
// polled them for 2 ms (or ever, if none had before the Drain began), so
// that completions are left to the application's poller while there is
// one; the completions its own polls find, those of this QP and of
// others sharing its CQs, go to handle (nil drops them). Between looks
// it sleeps (from 20 µs up to 1 ms), so that it neither spins a CPU nor
// takes events a CQ's owner waits for.
//
// Drain returns ctx's error, matching context.Canceled or
// os.ErrDeadlineExceeded, if ctx ends first; the QP is then in the error
// state and the markers may still come, as completions of the QP with
// the IDs DrainWRID and DrainWRID+1. It returns an error matching os.ErrClosed when the QP, its
// CQs or its context are closed meanwhile, and one matching unix.EBUSY
// when another Drain of the QP is in progress.
func (qp *QP) Drain(ctx context.Context, handle func(WC)) error {
	const op = "drain"
	a, err := qp.Query(QPAttrState)
	if err != nil {
		return err
	}
	if a.State == ib.QPStateReset {
		return nil // nothing can be posted to a QP in RESET
	}
	if !qp.draining.CompareAndSwap(false, true) {
		return qp.fail(op, fmt.Errorf("another drain of the QP is in progress: %w", unix.EBUSY))
	}
	defer qp.draining.Store(false)
	d := &drainer{qpn: qp.num, wake: make(chan struct{}, 1)}
	d.recv.Store(qp.srq != nil)
	cqs := qp.cqs()
	for _, cq := range cqs {
		cq.addDrainer(d)
		defer cq.removeDrainer(d)
	}
	// The receive marker goes in before the move to ERR: rxe flushes a
	// user QP's receive queue when the QP enters the error state, not
	// when a receive is posted later (user space posts receives without
	// a system call). If a message arrives first, it lands in the marker
	// (zero bytes: a length error on that message), and the flush still
	// ends with it.
	if !d.recv.Load() {
		if err := qp.PostRecv(&RecvWR{ID: DrainWRID + 1}); err != nil {
			return err
		}
	}
	if a.State != ib.QPStateErr {
		if err := qp.Modify(&QPAttr{State: ib.QPStateErr}, QPAttrState); err != nil {
			return err
		}
	}
	if qp.ctx.prov.traits().flushOnlyAtError {
		// The kernel flushed the send queue when the QP entered the
		// error state, and would never complete a marker posted now:
		// every send posted before has its completion.
		d.send.Store(true)
	} else if err := qp.postSend(&SendWR{ID: DrainWRID, Opcode: OpSend, Flags: SendSignaled}, true); err != nil {
		// The send marker: a signaled zero-length send that a QP in the
		// error state flushes (for UD without an address handle, which
		// the flush does not look at).
		return err
	}
	var wc [16]WC
	// Another goroutine polls when the CQs' Poll calls (Drain's own not
	// counted) move between looks; one that polled the CQs before the
	// Drain began is taken to be at work too.
	var seen [2]uint32
	var lastForeign time.Time
	for i, cq := range cqs {
		if seen[i] = pollCount(cq); seen[i] != 0 {
			lastForeign = time.Now()
		}
	}
	for pause := 20 * time.Microsecond; ; pause = min(2*pause, time.Millisecond) {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			if d.done() {
				return nil
			}
			return qp.fail(op, fmt.Errorf("send marker flushed: %v, receive marker: %v: %w",
				d.send.Load(), d.recv.Load(), waitfd.ContextError(ctx.Err())))
		case <-d.wake:
			t.Stop()
		case <-t.C:
		}
		if d.done() {
			return nil
		}
		if err := qp.live(op); err != nil {
			return err
		}
		now := time.Now()
		for i, cq := range cqs {
			if n := pollCount(cq); n != seen[i] {
				seen[i], lastForeign = n, now
			}
		}
		if !lastForeign.IsZero() && now.Sub(lastForeign) < drainQuiet {
			continue // a poller is at work: it finds the markers
		}
		for _, cq := range cqs {
			if err := drainPoll(cq, wc[:], handle); err != nil {
				return err
			}
		}
		if d.done() {
			return nil
		}
	}
}

// drainQuiet is how long no other goroutine must have polled a Drain's
// CQs before the Drain polls them itself.
const drainQuiet = 2 * time.Millisecond

// drainer is one Drain waiting for its markers, registered on the QP's
// CQs for as long as it waits.
type drainer struct {
	qpn        uint32
	send, recv atomic.Bool   // the marker has been polled
	wake       chan struct{} // signalled (without blocking) when one is
}

func (d *drainer) done() bool { return d.send.Load() && d.recv.Load() }

// takeMarker hands w, a completion with a marker's ID, to the Drain of
// its QP among drains; it reports false when no Drain of that QP waits
// (the ID is then an ordinary work request's).
func takeMarker(drains []*drainer, w *WC) bool {
	for _, d := range drains {
		if d.qpn != w.QPNum {
			continue
		}
		if w.ID == DrainWRID {
			d.send.Store(true)
		} else {
			d.recv.Store(true)
		}
		select {
		case d.wake <- struct{}{}:
		default:
		}
		return true
	}
	return false
}

// cqs is the QP's distinct CQs.
func (qp *QP) cqs() []*CQ {
	if qp.recvCQ == qp.sendCQ {
		return []*CQ{qp.sendCQ}
	}
	return []*CQ{qp.sendCQ, qp.recvCQ}
}

// addDrainer and removeDrainer change the CQ's drains (copied on write,
// so that Poll reads them with one atomic load).
func (cq *CQ) addDrainer(d *drainer) {
	cq.drainMu.Lock()
	defer cq.drainMu.Unlock()
	var ds []*drainer
	if old := cq.drains.Load(); old != nil {
		ds = append(ds, *old...)
	}
	ds = append(ds, d)
	cq.drains.Store(&ds)
}

func (cq *CQ) removeDrainer(d *drainer) {
	cq.drainMu.Lock()
	defer cq.drainMu.Unlock()
	old := cq.drains.Load()
	if old == nil {
		return
	}
	var ds []*drainer
	for _, x := range *old {
		if x != d {
			ds = append(ds, x)
		}
	}
	if len(ds) == 0 {
		cq.drains.Store(nil)
		return
	}
	cq.drains.Store(&ds)
}

// pollCount is the CQ's Poll calls so far, but Drain's own.
func pollCount(cq *CQ) uint32 { return cq.polls.Load() }

// drainPoll is Drain's own poll of cq: until it is empty, completions
// but the markers go to handle.
func drainPoll(cq *CQ, wc []WC, handle func(WC)) error {
	for {
		n, err := cq.pollAs(wc)
		if err != nil {
			return err
		}
		if handle != nil {
			for _, w := range wc[:n] {
				handle(w)
			}
		}
		if n < len(wc) {
			return nil
		}
	}
}
