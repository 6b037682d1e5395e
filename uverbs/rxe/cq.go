package rxe

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// CQ is an rxe completion queue with its queue mapped.
type CQ struct {
	u      *uverbs.CQ
	mu     sync.Mutex
	q      queue
	page   cmdPage
	notify [2][]byte // REQ_NOTIFY_CQ for all (0) and solicited-only (1) completions
	closed bool

	// armedAt is the producer index RequestNotify last saw after arming
	// the CQ, with bit 32 set; 0 once an event was taken (unarmed).
	armedAt atomic.Uint64
	events  atomic.Uint64 // completion events received (WaitEvent)
	acked   atomic.Uint64 // of which acknowledged (AckEvents)
}

// NewCQ maps cq's queue. The CQ takes ownership of cq: Close destroys it.
func NewCQ(cq *uverbs.CQ) (*CQ, error) {
	c := cq.Context()
	if err := checkDriver(c.Device(), "cq"); err != nil {
		return nil, err
	}
	drv := cq.DriverData()
	if len(drv) < abi.Sizeof[abi.RxeCreateCqResp]() {
		return nil, fmt.Errorf("rxe: cq %d: driver response of %d bytes: %w", cq.Handle(), len(drv), unix.EPROTO)
	}
	resp := abi.Decode[abi.RxeCreateCqResp](drv)
	q, err := mapQueue(c, "cq", resp.Mi)
	if err != nil {
		return nil, fmt.Errorf("rxe: cq %d: %w", cq.Handle(), err)
	}
	if q.elemSize() < abi.Sizeof[abi.UverbsWc]() {
		q.unmap()
		return nil, fmt.Errorf("rxe: cq %d: %d-byte elements: %w", cq.Handle(), q.elemSize(), unix.EPROTO)
	}
	page, err := newCmdPage()
	if err != nil {
		q.unmap()
		return nil, err
	}
	x := &CQ{u: cq, q: q, page: page}
	x.notify[0] = page.reqNotify(0, cq.Handle(), false)
	x.notify[1] = page.reqNotify(64, cq.Handle(), true)
	return x, nil
}

// UVerbs is the underlying uverbs CQ.
func (cq *CQ) UVerbs() *uverbs.CQ { return cq.u }

var errClosed = fmt.Errorf("rxe: closed: %w", os.ErrClosed)

// Poll reads up to len(wc) completions into wc and returns how many. It
// does not allocate.
func (cq *CQ) Poll(wc []WC) (int, error) {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.closed {
		return 0, errClosed
	}
	n := 0
	for n < len(wc) {
		cons, ok := cq.q.consume()
		if !ok {
			break
		}
		e := (*abi.UverbsWc)(cq.q.elem(cons))
		w := &wc[n]
		w.ID, w.Status, w.Opcode, w.VendorErr, w.ByteLen = e.WrID, WCStatus(e.Status), WCOpcode(e.Opcode), e.VendorErr, e.ByteLen
		w.Imm, w.QPNum, w.SrcQP, w.Flags = bits.ReverseBytes32(e.Ex), e.QpNum, e.SrcQp, WCFlags(e.WcFlags)
		w.PKeyIndex, w.SLID, w.SL, w.DLIDPath, w.Port = e.PkeyIndex, e.Slid, e.Sl, e.DlidPathBits, e.PortNum
		cq.q.release(cons)
		n++
	}
	return n, nil
}

// RequestNotify arms the CQ: the next completion (with solicitedOnly,
// the next solicited one) raises an event on its completion channel.
func (cq *CQ) RequestNotify(solicitedOnly bool) error {
	cmd := cq.notify[0]
	if solicitedOnly {
		cmd = cq.notify[1]
	}
	if err := cq.u.Context().WriteCommand("req notify cq", cmd); err != nil {
		return err
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	switch {
	case cq.closed || solicitedOnly: // no event follows every completion
		cq.armedAt.Store(0)
	default:
		cq.armedAt.Store(1<<32 | uint64(cq.q.produced()))
	}
	return nil
}

// eventQueued reports whether a completion arrived since RequestNotify
// armed the CQ for every completion: the kernel then queued its event.
func (cq *CQ) eventQueued() bool {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	a := cq.armedAt.Load()
	return !cq.closed && a != 0 && uint32(a) != cq.q.produced()
}

// WaitEvent waits until deadline (zero: for ever) for a completion event
// of this CQ on ch, the channel it was created with, and counts it for
// AckEvents. Events of other CQs are an error (use
// uverbs.CompChannel.GetEvent for a shared channel). The CQ must be armed
// with RequestNotify again to report another.
//
// An event can be stale: a CQ armed and then polled may already have
// handed over the completion that raised the event, which WaitEvent still
// returns later. As with ibv_get_cq_event, acknowledge it, re-arm, and
// poll; a poll that then finds nothing is normal.
//
// When a completion has arrived since the CQ was armed for every
// completion, its event is already queued and WaitEvent reads it without
// waiting first (even past the deadline): one system call instead of
// two. Under Soft-RoCE on Linux 6.1 that is the case once per pingpong
// round trip (the peer's acknowledgement is processed before the
// doorbell's system call returns).
func (cq *CQ) WaitEvent(ch *uverbs.CompChannel, deadline time.Time) error {
	var got *uverbs.CQ
	var ok bool
	var err error
	if cq.eventQueued() {
		if got, ok, err = ch.TryGetEvent(); err != nil {
			return err
		}
	}
	if !ok {
		if got, err = ch.GetEvent(deadline); err != nil {
			return err
		}
	}
	if got != cq.u {
		return fmt.Errorf("rxe: cq %d: event for another cq: %w", cq.u.Handle(), unix.EPROTO)
	}
	cq.armedAt.Store(0)
	cq.events.Add(1)
	return nil
}

// AckEvents acknowledges n events WaitEvent returned (ibv_ack_cq_events).
func (cq *CQ) AckEvents(n int) { cq.acked.Add(uint64(n)) }

// UnackedEvents is how many events WaitEvent returned that were not
// acknowledged.
func (cq *CQ) UnackedEvents() int { return int(cq.events.Load() - cq.acked.Load()) }

// Close unmaps the queue and destroys the CQ. Safe to call more than
// once; if the kernel refuses (QPs still use the CQ) the CQ stays usable.
func (cq *CQ) Close() error {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.closed {
		return nil
	}
	if err := cq.u.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	cq.closed = true
	err := cq.q.unmap()
	cq.page.free()
	return err
}

// Resize gives the CQ room for at least cqe completions and maps the
// queue rxe moved them to (RESIZE_CQ; the kernel copies the completions
// not yet polled). It must not run concurrently with Poll.
func (cq *CQ) Resize(cqe int) error {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.closed {
		return errClosed
	}
	if err := cq.u.Resize(cqe); err != nil {
		return err
	}
	drv := cq.u.DriverData()
	if len(drv) < abi.Sizeof[abi.RxeCreateCqResp]() {
		return fmt.Errorf("rxe: resize cq %d: driver response of %d bytes: %w", cq.u.Handle(), len(drv), unix.EPROTO)
	}
	q, err := mapQueue(cq.u.Context(), "cq", abi.Decode[abi.RxeCreateCqResp](drv).Mi)
	if err != nil {
		return fmt.Errorf("rxe: resize cq %d: %w", cq.u.Handle(), err)
	}
	old := cq.q
	cq.q = q
	return old.unmap()
}
