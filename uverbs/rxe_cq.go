package uverbs

import (
	"fmt"
	"math/bits"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// rxeCQ is an rxe completion queue's mapped queue and its REQ_NOTIFY_CQ
// doorbells.
type rxeCQ struct {
	cq     *CQ
	mu     sync.Mutex
	q      queue
	page   cmdPage
	notify [2][]byte // REQ_NOTIFY_CQ for all (0) and solicited-only (1) completions
	polled uint32    // completions Poll has taken (modulo 2^32)
	closed bool      // the data path is closed: the CQ is destroyed, or about to be unmapped
	gone   bool      // unmapped
}

func (rxeProvider) newCQ(cq *CQ, _ driverIO) (cqOps, error) {
	q, err := rxeCQQueue(cq)
	if err != nil {
		return nil, err
	}
	page, err := newCmdPage()
	if err != nil {
		q.unmap()
		return nil, err
	}
	x := &rxeCQ{cq: cq, q: q, page: page}
	x.notify[0] = page.reqNotify(0, cq.handle, false)
	x.notify[1] = page.reqNotify(64, cq.handle, true)
	return x, nil
}

// rxeCQQueue maps the queue named by the CQ's driver response (struct
// rxe_create_cq_resp, which rxe_resize_cq_resp repeats).
func rxeCQQueue(cq *CQ) (queue, error) {
	if len(cq.driver) < kabi.Sizeof[abi.RxeCreateCqResp]() {
		return queue{}, fmt.Errorf("driver response of %d bytes: %w", len(cq.driver), unix.EPROTO)
	}
	q, err := mapRxeQueue(cq.ctx, "cq", kabi.Decode[abi.RxeCreateCqResp](cq.driver).Mi)
	if err != nil {
		return queue{}, err
	}
	if q.elemSize() < kabi.Sizeof[abi.UverbsWc]() {
		q.unmap()
		return queue{}, fmt.Errorf("%d-byte elements: %w", q.elemSize(), unix.EPROTO)
	}
	return q, nil
}

// poll takes up to len(wc) completions from the queue.
func (x *rxeCQ) poll(wc []WC) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, x.cq.closedErr("poll cq")
	}
	n := 0
	for n < len(wc) {
		cons, ok := x.q.consume()
		if !ok {
			break
		}
		e := (*abi.UverbsWc)(x.q.elem(cons))
		w := &wc[n]
		w.ID, w.Status, w.Opcode, w.VendorErr, w.ByteLen = e.WrID, WCStatus(e.Status), WCOpcode(e.Opcode), e.VendorErr, e.ByteLen
		w.QPNum, w.SrcQP, w.Flags = e.QpNum, e.SrcQp, WCFlags(e.WcFlags)
		w.Imm, w.InvRKey = 0, 0
		switch {
		case w.Flags&WCWithImm != 0:
			w.Imm = bits.ReverseBytes32(e.Ex)
		case w.Flags&WCWithInv != 0:
			w.InvRKey = e.Ex
		}
		w.PKeyIndex, w.SLID, w.SL, w.DLIDPath, w.Port = e.PkeyIndex, e.Slid, e.Sl, e.DlidPathBits, e.PortNum
		x.q.release(cons)
		n++
	}
	x.polled += uint32(n)
	return n, nil
}

func (x *rxeCQ) requestNotify(solicitedOnly bool) error {
	cmd := x.notify[0]
	if solicitedOnly {
		cmd = x.notify[1]
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return x.cq.closedErr("req notify cq")
	}
	return x.cq.ctx.doorbell("req notify cq", cmd)
}

// produced counts the completions the kernel has written: those polled
// and those waiting in the queue (at most its capacity, so the count is
// exact whatever the indices' wrap).
func (x *rxeCQ) produced() uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0
	}
	return x.polled + x.q.count()
}

// resized maps the queue rxe moved the completions to (RESIZE_CQ).
func (x *rxeCQ) resized() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return x.cq.closedErr("resize cq")
	}
	return x.q.replace(rxeCQQueue(x.cq))
}

func (x *rxeCQ) release() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.releaseLocked()
}

func (x *rxeCQ) releaseLocked() error {
	x.closed = true
	if x.gone {
		return nil
	}
	x.gone = true
	err := x.q.unmap()
	x.page.free()
	return err
}

// destroyQuiet runs the CQ's destroy with no poll or arm in flight, and
// closes the data path if it succeeded (see quiescer).
func (x *rxeCQ) destroyQuiet(destroy func() error) error {
	return destroyLocked(&x.closed, destroy, &x.mu)
}
