package uverbs

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

const (
	sendWqeHdr = int(unsafe.Sizeof(abi.RxeSendWqe{}))
	recvWqeHdr = int(unsafe.Sizeof(abi.RxeRecvWqe{}))
	sgeSize    = int(unsafe.Sizeof(abi.RxeSge{}))
)

// rxeQP is an rxe queue pair's mapped send queue (and, without an SRQ,
// receive queue) and its send doorbell.
type rxeQP struct {
	qp   *QP
	page cmdPage
	db   []byte // the send doorbell

	sqMu sync.Mutex
	sq   queue
	ssn  uint32

	rqMu sync.Mutex
	rq   queue // unmapped when the QP uses an SRQ

	closed bool // the data path is closed: the QP is destroyed, or about to be unmapped (under both locks)
	gone   bool // unmapped
}

func (rxeProvider) newQP(qp *QP, d driverIO) (qpOps, error) {
	drv := d.out
	if len(drv) < kabi.Sizeof[abi.RxeCreateQpResp]() {
		return nil, fmt.Errorf("driver response of %d bytes: %w", len(drv), unix.EPROTO)
	}
	resp := kabi.Decode[abi.RxeCreateQpResp](drv)
	x := &rxeQP{qp: qp}
	var err error
	if x.sq, err = mapRxeQueue(qp.ctx, "send queue", resp.SqMi); err != nil {
		return nil, err
	}
	if resp.RqMi.Size != 0 {
		if x.rq, err = mapRxeQueue(qp.ctx, "receive queue", resp.RqMi); err != nil {
			x.sq.unmap()
			return nil, err
		}
	}
	if x.sq.elemSize() < sendWqeHdr || (x.rq.mem != nil && x.rq.elemSize() < recvWqeHdr) {
		x.sq.unmap()
		x.rq.unmap()
		return nil, fmt.Errorf("work queue elements too small: %w", unix.EPROTO)
	}
	if x.page, err = newCmdPage(); err != nil {
		x.sq.unmap()
		x.rq.unmap()
		return nil, err
	}
	x.db = x.page.postSendDoorbell(qp.handle)
	return x, nil
}

// MaxInline is the most inline data one send work request can carry.
func (x *rxeQP) maxInline() int {
	return min(int(x.qp.cap.MaxInlineData), x.sq.elemSize()-sendWqeHdr)
}

// maxSendSGE is the most SGEs a send queue element holds.
func (x *rxeQP) maxSendSGE() int { return (x.sq.elemSize() - sendWqeHdr) / sgeSize }

// post posts wr and rings the doorbell; marker is set for Drain's send
// marker, which a UD QP posts without an address handle (the flush does
// not look at it).
func (x *rxeQP) post(wr *SendWR, marker bool) error {
	x.sqMu.Lock()
	defer x.sqMu.Unlock()
	if x.closed {
		return x.qp.closedErr("post send")
	}
	if err := x.postOneSend(wr, marker); err != nil {
		return err
	}
	return x.qp.ctx.doorbell("post send", x.db)
}

func (x *rxeQP) postSendList(wrs []SendWR) error {
	x.sqMu.Lock()
	defer x.sqMu.Unlock()
	if x.closed {
		return x.qp.closedErr("post send")
	}
	var perr error
	n := 0
	for i := range wrs {
		if perr = x.postOneSend(&wrs[i], false); perr != nil {
			perr = fmt.Errorf("work request %d: %w", i, perr)
			break
		}
		n++
	}
	if n > 0 {
		if err := x.qp.ctx.doorbell("post send", x.db); err != nil {
			return err
		}
	}
	return perr
}

func (x *rxeQP) postOneSend(wr *SendWR, marker bool) error {
	qp := x.qp
	const op = "post send"
	if err := qp.checkSend(wr, x.maxInline(), x.maxSendSGE()); err != nil {
		return err
	}
	length := uint64(len(wr.Inline))
	for i := range wr.SGE {
		length += uint64(wr.SGE[i].Length)
	}
	var ahNum uint32
	if qp.typ == ib.QPTypeUD && !marker {
		if wr.AH == nil {
			return qp.invalid(op, "a UD send needs an address handle")
		}
		if ahNum = rxeAHNum(wr.AH); ahNum == 0 {
			return qp.fail(op, fmt.Errorf("the address handle has no ah_num (a kernel before Linux 5.11): %w", ErrNotSupported))
		}
	}
	prod, ok := x.sq.produce()
	if !ok {
		return qp.fail(op, ErrQueueFull)
	}
	p := x.sq.elem(prod)
	wqe := (*abi.RxeSendWqe)(p)
	*wqe = abi.RxeSendWqe{}
	flags := wr.Flags
	if len(wr.Inline) != 0 {
		flags |= SendInline // the kernel finds the data in the element by this flag
	}
	wqe.Wr.WrID, wqe.Wr.Opcode, wqe.Wr.SendFlags = wr.ID, uint32(wr.Opcode), uint32(flags)
	switch wr.Opcode {
	case OpSendWithImm, OpRDMAWriteWithImm:
		wqe.Wr.Ex = bits.ReverseBytes32(wr.Imm)
	case OpLocalInv, OpSendWithInv:
		wqe.Wr.Ex = wr.InvalidateRKey
	}
	u := unsafe.Pointer(&wqe.Wr.Wr[0])
	switch {
	case wr.Opcode == OpBindMW:
		*(*uint64)(unsafe.Add(u, abi.RxeWrMwAddr)) = wr.MWBind.Addr
		*(*uint64)(unsafe.Add(u, abi.RxeWrMwLength)) = wr.MWBind.Length
		*(*uint32)(unsafe.Add(u, abi.RxeWrMwMrLkey)) = wr.MWBind.LKey
		*(*uint32)(unsafe.Add(u, abi.RxeWrMwMwRkey)) = wr.MW.RKey()
		*(*uint32)(unsafe.Add(u, abi.RxeWrMwRkey)) = wr.MWRKey
		*(*uint32)(unsafe.Add(u, abi.RxeWrMwAccess)) = uint32(wr.MWBind.Access)
	case wr.Opcode.atomic():
		*(*uint64)(unsafe.Add(u, abi.RxeWrAtomicRemoteAddr)) = wr.RemoteAddr
		*(*uint64)(unsafe.Add(u, abi.RxeWrAtomicCompareAdd)) = wr.CompareAdd
		*(*uint64)(unsafe.Add(u, abi.RxeWrAtomicSwap)) = wr.Swap
		*(*uint32)(unsafe.Add(u, abi.RxeWrAtomicRkey)) = wr.RKey
	case qp.typ == ib.QPTypeUD:
		*(*uint32)(unsafe.Add(u, abi.RxeWrUDRemoteQpn)) = wr.RemoteQPN
		*(*uint32)(unsafe.Add(u, abi.RxeWrUDRemoteQkey)) = wr.RemoteQKey
		*(*uint32)(unsafe.Add(u, abi.RxeWrUDAhNum)) = ahNum
	case wr.Opcode != OpSend && wr.Opcode != OpSendWithImm && wr.Opcode != OpSendWithInv && wr.Opcode != OpLocalInv:
		*(*uint64)(unsafe.Add(u, abi.RxeWrRdmaRemoteAddr)) = wr.RemoteAddr
		*(*uint32)(unsafe.Add(u, abi.RxeWrRdmaRkey)) = wr.RKey
	}
	data := unsafe.Add(p, sendWqeHdr)
	nsge := uint32(len(wr.SGE))
	switch {
	case len(wr.Inline) != 0:
		// One copy, from the caller's bytes; num_sge says 1 as for the
		// same bytes inlined from one SGE (what librxe writes for it).
		copy(unsafe.Slice((*byte)(data), len(wr.Inline)), wr.Inline)
		nsge = 1
	case flags&SendInline != 0:
		off := uintptr(0)
		for i := range wr.SGE {
			s := &wr.SGE[i]
			copy(unsafe.Slice((*byte)(unsafe.Add(data, off)), s.Length), unsafe.Slice(addrPtr(s.Addr), s.Length))
			off += uintptr(s.Length)
		}
	default:
		for i := range wr.SGE {
			s := &wr.SGE[i]
			*(*abi.RxeSge)(unsafe.Add(data, i*sgeSize)) = abi.RxeSge{Addr: s.Addr, Length: s.Length, Lkey: s.LKey}
		}
	}
	wqe.Iova = wr.RemoteAddr
	wqe.Dma.Length, wqe.Dma.Resid, wqe.Dma.NumSge = uint32(length), uint32(length), nsge
	wqe.Ssn = x.ssn
	x.ssn++
	x.sq.publish(prod)
	if wr.Opcode == OpBindMW {
		wr.MW.rkey.Store(wr.MWRKey)
	}
	return nil
}

// rxeAHNum is the AH's number in struct rxe_create_ah_resp (0: a kernel
// before Linux 5.11, which has none).
func rxeAHNum(ah *AH) uint32 {
	if len(ah.driver) < kabi.Sizeof[abi.RxeCreateAhResp]() {
		return 0
	}
	return kabi.Decode[abi.RxeCreateAhResp](ah.driver).AhNum
}

// addrPtr turns a registered buffer's address back into a pointer, for
// copying inline data. The memory is outside the Go heap (an mmap).
func addrPtr(a uint64) *byte {
	return *(**byte)(unsafe.Pointer(&a))
}

func (x *rxeQP) postRecv(wr *RecvWR) error {
	x.rqMu.Lock()
	defer x.rqMu.Unlock()
	if x.closed {
		return x.qp.closedErr("post recv")
	}
	return postRxeRecv(&x.rq, wr, int(x.qp.cap.MaxRecvSGE), &x.qp.object)
}

// postRecv writes wr into a receive queue (a QP's or an SRQ's).
func postRxeRecv(q *queue, wr *RecvWR, maxSGE int, o *object) error {
	const op = "post recv"
	if len(wr.SGE) > maxSGE || recvWqeHdr+len(wr.SGE)*sgeSize > q.elemSize() {
		return o.invalid(op, "%d SGEs, at most %d", len(wr.SGE), maxSGE)
	}
	prod, ok := q.produce()
	if !ok {
		return o.fail(op, ErrQueueFull)
	}
	p := q.elem(prod)
	wqe := (*abi.RxeRecvWqe)(p)
	*wqe = abi.RxeRecvWqe{WrID: wr.ID}
	var length uint32
	for i := range wr.SGE {
		s := &wr.SGE[i]
		*(*abi.RxeSge)(unsafe.Add(p, recvWqeHdr+i*sgeSize)) = abi.RxeSge{Addr: s.Addr, Length: s.Length, Lkey: s.LKey}
		length += s.Length
	}
	wqe.Dma.Length, wqe.Dma.Resid, wqe.Dma.NumSge = length, length, uint32(len(wr.SGE))
	q.publish(prod)
	return nil
}

func (x *rxeQP) release() error {
	x.sqMu.Lock()
	defer x.sqMu.Unlock()
	x.rqMu.Lock()
	defer x.rqMu.Unlock()
	return x.releaseLocked()
}

func (x *rxeQP) releaseLocked() error {
	x.closed = true
	if x.gone {
		return nil
	}
	x.gone = true
	err := errors.Join(x.sq.unmap(), x.rq.unmap())
	x.page.free()
	return err
}

// destroyQuiet runs the QP's destroy with no post in flight (see
// quiescer).
func (x *rxeQP) destroyQuiet(destroy func() error) error {
	return destroyLocked(&x.closed, destroy, &x.sqMu, &x.rqMu)
}
