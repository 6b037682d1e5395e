package uverbs

import "sync/atomic"

// The completion channel's wait hint (waitfd.FD.SetHint): a wait need not
// read before it parks when no CQ bound to the channel can have an event
// queued. On Soft-RoCE under Linux 6.12 that spares most waits a read(2)
// that would find nothing: the completion comes from a workqueue after
// the waiter sleeps. The hint may only say "nothing" when that is
// certain: a wait parked while an event is queued sleeps until the next
// event, as the netpoller reports only new readiness.
//
// What the kernel does (rxe_cq_post, ib_uverbs_comp_handler): an arm
// (REQ_NOTIFY_CQ) sets the CQ's notify flag; the next completion clears
// it and queues one event on the channel. So a CQ has at most one arm
// pending, and every event read comes from one arm.
//
// Each CQ keeps bound, an upper bound of its events queued plus its arm
// pending, less the events its readers have read but not yet counted:
//
//   - RequestNotify adds one, before the arm is made (armsMade first,
//     then bound), and counts the arm done (armsDone) once the kernel
//     has it;
//   - a reader that read an event for the CQ takes one off (countRead),
//     after it has given the fd back to the other readers;
//   - a read that found the channel empty (emptied, under waitfd's turn,
//     which serializes it with every other read and hook) knows that at
//     the moment of its read(2), T, the CQ had no event queued and at
//     most one arm pending. Later events come from that arm or from arms
//     whose doorbell had not been rung by T; those are at most armsMade
//     now less armsDone at T, and armsDone at T is at least doneSnap,
//     the value seen at the channel's previous hook (before T). Events
//     read before T whose readers have not counted them yet are at most
//     the other readers in flight (ch.readers less this one). So bound
//     can be lowered to 1 + (armsMade - doneSnap) + (readers - 1), and
//     no lower; concurrent arms and counts are kept (a CAS loop that
//     reads bound before armsMade).
//
// mayHaveEvent is false when bound is 0, or 1 with no completion since
// the last arm: the one arm counted has not fired. Both ends err towards
// a read, never towards a wait over a queued event.

// maxHintCQs: with more CQs on one channel every wait reads first.
const maxHintCQs = 4

// armHint is a CQ's part of its channel's hint.
type armHint struct {
	bound    atomic.Int64  // see above
	armsMade atomic.Uint64 // RequestNotify calls begun
	armsDone atomic.Uint64 // RequestNotify calls whose doorbell returned
	doneSnap atomic.Uint64 // armsDone at the channel's last hook (read under the turn)
	armedAt  atomic.Uint32 // the provider's completion count before the last arm
}

// arming is called before an arm is made; produced is the provider's
// completion count.
func (h *armHint) arming(produced uint32) {
	h.armedAt.Store(produced)
	h.armsMade.Add(1)
	h.bound.Add(1)
}

// armed is called once the arm's doorbell returned (or failed).
func (h *armHint) armed() { h.armsDone.Add(1) }

// countRead takes off one event a reader read for the CQ.
func (h *armHint) countRead() {
	for n := h.bound.Load(); n > 0 && !h.bound.CompareAndSwap(n, n-1); n = h.bound.Load() {
	}
}

// mayHaveEvent reports whether the CQ, whose provider is ops (nil for
// none), may have an event queued.
func (h *armHint) mayHaveEvent(ops cqOps) bool {
	switch n := h.bound.Load(); {
	case n <= 0:
		return false
	case n > 1 || ops == nil:
		return true
	}
	return ops.produced() != h.armedAt.Load()
}

// snapshot records armsDone at a hook, for the next emptied.
func (h *armHint) snapshot() { h.doneSnap.Store(h.armsDone.Load()) }

// emptied lowers bound after a read found the channel empty, with others
// readers besides this one in flight, and takes a new snapshot.
func (h *armHint) emptied(others int64) {
	snap := h.doneSnap.Load()
	h.snapshot()
	for {
		n := h.bound.Load()
		limit := 1 + int64(h.armsMade.Load()-snap) + others
		if n <= limit || h.bound.CompareAndSwap(n, limit) {
			return
		}
	}
}

// mayHaveEvent is the channel's hint, called by waitfd at the start of a
// wait, under the fd's turn.
func (ch *CompChannel) mayHaveEvent() bool {
	cqs := *ch.cqs.Load()
	if len(cqs) > maxHintCQs {
		return true
	}
	may := false
	for _, cq := range cqs {
		cq.hint.snapshot()
		may = may || cq.hint.mayHaveEvent(cq.ops)
	}
	return may
}

// empty is called by waitfd, under the fd's turn, when a read found
// nothing queued.
func (ch *CompChannel) empty() {
	cqs := *ch.cqs.Load()
	if len(cqs) > maxHintCQs {
		return // bounds only grow meanwhile: safe, and the hint is off
	}
	others := max(ch.readers.Load()-1, 0)
	for _, cq := range cqs {
		cq.hint.emptied(others)
	}
}
