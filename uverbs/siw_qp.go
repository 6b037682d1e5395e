package uverbs

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// siwQP is a siw queue pair's mapped send queue (and, without an SRQ,
// receive queue) and its send doorbell.
type siwQP struct {
	qp   *QP
	page cmdPage
	db   []byte // the send doorbell: POST_SEND without work requests

	sqMu sync.Mutex
	sq   siwRing

	rqMu sync.Mutex
	rq   siwRing // unmapped when the QP uses an SRQ

	closed bool // the data path is closed: the QP is destroyed, or about to be unmapped (under both locks)
}

var (
	siwSqeSize = unsafe.Sizeof(abi.SiwSqe{})
	siwRqeSize = unsafe.Sizeof(abi.SiwRqe{})
)

func (siwProvider) newQP(qp *QP, d driverIO) (qpOps, error) {
	if len(d.out) < kabi.Sizeof[abi.SiwUrespCreateQp]() {
		return nil, fmt.Errorf("driver response of %d bytes: %w", len(d.out), unix.EPROTO)
	}
	r := kabi.Decode[abi.SiwUrespCreateQp](d.out)
	x := &siwQP{qp: qp}
	var err error
	if x.sq, err = mapSIWRing(qp.ctx, "send queue", r.SqKey, r.NumSqe, siwSqeSize, 0); err != nil {
		return nil, err
	}
	if qp.srq == nil {
		if x.rq, err = mapSIWRing(qp.ctx, "receive queue", r.RqKey, r.NumRqe, siwRqeSize, 0); err != nil {
			x.sq.unmap()
			return nil, err
		}
	}
	if x.page, err = newCmdPage(); err != nil {
		x.sq.unmap()
		x.rq.unmap()
		return nil, err
	}
	x.db = x.page.postSendDoorbell(qp.handle)
	return x, nil
}

// maxInline is the most inline data one send carries: what the kernel
// granted, within the space of sge[1..].
func (x *siwQP) maxInline() int { return min(int(x.qp.cap.MaxInlineData), abi.SiwMaxInline) }

func (x *siwQP) maxSendSGE() int { return abi.SiwMaxSge }

// siwSendOpcode maps the opcodes iWARP carries (Opcode.onIWARP) to
// siw's (libsiw's map_send_opcode).
func siwSendOpcode(o Opcode) uint8 {
	switch o {
	case OpRDMAWrite:
		return abi.SiwOpWrite
	case OpRDMARead:
		return abi.SiwOpRead
	case OpSendWithInv:
		return abi.SiwOpSendRemoteInv
	}
	return abi.SiwOpSend
}

// post posts wr and rings the doorbell.
func (x *siwQP) post(wr *SendWR) error {
	x.sqMu.Lock()
	defer x.sqMu.Unlock()
	if x.closed {
		return x.qp.closedErr("post send")
	}
	start := x.sq.count
	if err := x.postOne(wr); err != nil {
		return err
	}
	return x.ring(start)
}

func (x *siwQP) postSendList(wrs []SendWR) error {
	x.sqMu.Lock()
	defer x.sqMu.Unlock()
	if x.closed {
		return x.qp.closedErr("post send")
	}
	start := x.sq.count
	var perr error
	for i := range wrs {
		if perr = x.postOne(&wrs[i]); perr != nil {
			perr = fmt.Errorf("work request %d: %w", i, perr)
			break
		}
	}
	if x.sq.count != start {
		if err := x.ring(start); err != nil {
			return err
		}
	}
	return perr
}

// ring rings the doorbell for the elements posted from count start on,
// unless the kernel is still at work on the queue: then the element
// before them is still VALID, and the kernel takes the new ones after
// it (libsiw's rule; a queue rewritten whole always rings).
func (x *siwQP) ring(start uint32) error {
	if x.sq.count-start < x.sq.n &&
		atomic.LoadUint32(flagsWord(x.sq.slot(start-1)))&abi.SiwWqeValid != 0 {
		return nil
	}
	return x.qp.ctx.doorbell("post send", x.db)
}

func (x *siwQP) postOne(wr *SendWR) error {
	qp := x.qp
	const op = "post send"
	if err := qp.checkSend(wr, x.maxInline(), x.maxSendSGE()); err != nil {
		return err
	}
	inline := wr.Flags&SendInline != 0 || len(wr.Inline) != 0
	if inline && wr.Opcode != OpSend && wr.Opcode != OpRDMAWrite {
		return qp.invalid(op, "inline data with %v (siw inlines SEND and RDMA_WRITE only)", wr.Opcode)
	}
	p := x.sq.slot(x.sq.count)
	if atomic.LoadUint32(flagsWord(p))&abi.SiwWqeValid != 0 {
		return qp.fail(op, ErrQueueFull)
	}
	e := (*abi.SiwSqe)(p)
	e.ID, e.Raddr, e.Rkey = wr.ID, wr.RemoteAddr, wr.RKey
	if wr.Opcode == OpSendWithInv {
		e.Rkey = wr.InvalidateRKey
	}
	flags := uint32(abi.SiwWqeValid)
	if wr.Flags&SendSignaled != 0 || qp.sigAll {
		flags |= abi.SiwWqeSignalled
	}
	if wr.Flags&SendSolicited != 0 {
		flags |= abi.SiwWqeSolicited
	}
	if wr.Flags&SendFence != 0 {
		flags |= abi.SiwWqeReadFence
	}
	nsge := uint32(len(wr.SGE))
	if inline {
		// The data goes over sge[1..] and sge[0] says its length
		// (libsiw's push_send_wqe); the kernel points sge[0] at it and
		// takes num_sge as 1 (siw_activate_tx). Inline bytes say 1, as
		// the same bytes inlined from one SGE do.
		flags |= abi.SiwWqeInline
		dst := unsafe.Slice((*byte)(unsafe.Pointer(&e.Sge[1])), abi.SiwMaxInline)
		off := uint32(copy(dst, wr.Inline))
		for i := range wr.SGE {
			s := &wr.SGE[i]
			off += uint32(copy(dst[off:], unsafe.Slice(addrPtr(s.Addr), s.Length)))
		}
		e.Sge[0] = abi.SiwSge{Length: off}
		if len(wr.Inline) != 0 {
			nsge = 1
		}
	} else {
		for i := range wr.SGE {
			s := &wr.SGE[i]
			e.Sge[i] = abi.SiwSge{Laddr: s.Addr, Length: s.Length, Lkey: s.LKey}
		}
	}
	// Flags, num_sge and opcode last, in one release store: the slot is
	// the kernel's.
	atomic.StoreUint32(flagsWord(p), flags|nsge<<16|uint32(siwSendOpcode(wr.Opcode))<<24)
	x.sq.count++
	return nil
}

func (x *siwQP) postRecv(wr *RecvWR) error {
	x.rqMu.Lock()
	defer x.rqMu.Unlock()
	if x.closed {
		return x.qp.closedErr("post recv")
	}
	return postSIWRecv(&x.rq, wr, &x.qp.object)
}

// postSIWRecv writes wr into a receive ring (a QP's or an SRQ's).
func postSIWRecv(r *siwRing, wr *RecvWR, o *object) error {
	const op = "post recv"
	if len(wr.SGE) > abi.SiwMaxSge {
		return o.invalid(op, "%d SGEs, at most %d", len(wr.SGE), abi.SiwMaxSge)
	}
	p := r.slot(r.count)
	if atomic.LoadUint32(flagsWord(p))&abi.SiwWqeValid != 0 {
		return o.fail(op, ErrQueueFull)
	}
	e := (*abi.SiwRqe)(p)
	e.ID = wr.ID
	for i := range wr.SGE {
		s := &wr.SGE[i]
		e.Sge[i] = abi.SiwSge{Laddr: s.Addr, Length: s.Length, Lkey: s.LKey}
	}
	// The kernel compares the flags with VALID for equality.
	atomic.StoreUint32(flagsWord(p), abi.SiwWqeValid|uint32(len(wr.SGE))<<16)
	r.count++
	return nil
}

func (x *siwQP) release() error {
	x.sqMu.Lock()
	defer x.sqMu.Unlock()
	x.rqMu.Lock()
	defer x.rqMu.Unlock()
	x.closed = true
	err := errors.Join(x.sq.unmap(), x.rq.unmap())
	x.page.free()
	return err
}

// destroyQuiet runs the QP's destroy with no post in flight (the
// doorbell names its handle; see quiescer).
func (x *siwQP) destroyQuiet(destroy func() error) error {
	return destroyLocked(&x.closed, destroy, &x.sqMu, &x.rqMu)
}
