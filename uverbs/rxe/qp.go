package rxe

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

const (
	sendWqeHdr = int(unsafe.Sizeof(abi.RxeSendWqe{}))
	recvWqeHdr = int(unsafe.Sizeof(abi.RxeRecvWqe{}))
	sgeSize    = int(unsafe.Sizeof(abi.RxeSge{}))
)

// QP is an rxe queue pair with its send queue (and, without an SRQ, its
// receive queue) mapped.
type QP struct {
	u    *uverbs.QP
	typ  ib.QPType
	cap  uverbs.QPCap
	page cmdPage
	db   []byte // the send doorbell

	sqMu sync.Mutex
	sq   queue
	ssn  uint32

	rqMu sync.Mutex
	rq   queue // unmapped when the QP uses an SRQ

	closeMu sync.Mutex
	closed  bool
}

// ErrQueueFull is matched by the error of a post to a full queue
// (libibverbs' ENOMEM).
var ErrQueueFull = fmt.Errorf("queue full: %w", unix.ENOMEM)

// NewQP maps qp's queues. The QP takes ownership of qp: Close destroys it.
func NewQP(qp *uverbs.QP) (*QP, error) {
	c := qp.Context()
	if err := checkDriver(c.Device(), "qp"); err != nil {
		return nil, err
	}
	drv := qp.DriverData()
	if len(drv) < abi.Sizeof[abi.RxeCreateQpResp]() {
		return nil, fmt.Errorf("rxe: qp %d: driver response of %d bytes: %w", qp.Num(), len(drv), unix.EPROTO)
	}
	resp := abi.Decode[abi.RxeCreateQpResp](drv)
	x := &QP{u: qp, typ: qp.Type(), cap: qp.Cap()}
	var err error
	if x.sq, err = mapQueue(c, "send queue", resp.SqMi); err != nil {
		return nil, fmt.Errorf("rxe: qp %d: %w", qp.Num(), err)
	}
	if resp.RqMi.Size != 0 {
		if x.rq, err = mapQueue(c, "receive queue", resp.RqMi); err != nil {
			x.sq.unmap()
			return nil, fmt.Errorf("rxe: qp %d: %w", qp.Num(), err)
		}
	}
	if x.sq.elemSize() < sendWqeHdr || (x.rq.mem != nil && x.rq.elemSize() < recvWqeHdr) {
		x.sq.unmap()
		x.rq.unmap()
		return nil, fmt.Errorf("rxe: qp %d: work queue elements too small: %w", qp.Num(), unix.EPROTO)
	}
	if x.page, err = newCmdPage(); err != nil {
		x.sq.unmap()
		x.rq.unmap()
		return nil, err
	}
	x.db = x.page.postSendDoorbell(qp.Handle())
	return x, nil
}

// UVerbs is the underlying uverbs QP (for Modify and Query).
func (qp *QP) UVerbs() *uverbs.QP { return qp.u }

// Num is the QP number.
func (qp *QP) Num() uint32 { return qp.u.Num() }

// MaxInline is the most inline data one send work request can carry.
func (qp *QP) MaxInline() int {
	return min(int(qp.cap.MaxInlineData), qp.sq.elemSize()-sendWqeHdr)
}

func (qp *QP) invalid(op string, format string, args ...any) error {
	return fmt.Errorf("rxe: qp %d: %s: %s: %w", qp.u.Num(), op, fmt.Sprintf(format, args...), unix.EINVAL)
}

// PostSend posts one send work request and rings the doorbell.
func (qp *QP) PostSend(wr *SendWR) error {
	qp.sqMu.Lock()
	defer qp.sqMu.Unlock()
	if qp.sq.mem == nil {
		return errClosed
	}
	if err := qp.postOneSend(wr); err != nil {
		return err
	}
	return qp.u.Context().WriteCommand("post send", qp.db)
}

// PostSendList posts the work requests in order and rings the doorbell
// once. On an error the requests before the failing one are posted (the
// doorbell is rung for them) and the error says which failed.
func (qp *QP) PostSendList(wrs []SendWR) error {
	qp.sqMu.Lock()
	defer qp.sqMu.Unlock()
	if qp.sq.mem == nil {
		return errClosed
	}
	var perr error
	n := 0
	for i := range wrs {
		if perr = qp.postOneSend(&wrs[i]); perr != nil {
			perr = fmt.Errorf("work request %d: %w", i, perr)
			break
		}
		n++
	}
	if n > 0 {
		if err := qp.u.Context().WriteCommand("post send", qp.db); err != nil {
			return err
		}
	}
	return perr
}

func (qp *QP) postOneSend(wr *SendWR) error {
	const op = "post send"
	if len(wr.SGE) > int(qp.cap.MaxSendSGE) {
		return qp.invalid(op, "%d SGEs, the QP has %d", len(wr.SGE), qp.cap.MaxSendSGE)
	}
	var length uint64
	for i := range wr.SGE {
		length += uint64(wr.SGE[i].Length)
	}
	switch {
	case wr.Opcode > OpAtomicFetchAdd:
		return qp.invalid(op, "opcode %v", wr.Opcode)
	case qp.typ == ib.QPTypeUD && wr.Opcode != OpSend && wr.Opcode != OpSendWithImm:
		return qp.invalid(op, "%v on a UD QP", wr.Opcode)
	case qp.typ == ib.QPTypeUC && (wr.Opcode == OpRDMARead || wr.Opcode.atomic()):
		return qp.invalid(op, "%v on a UC QP", wr.Opcode)
	case wr.Opcode.atomic() && (length < 8 || wr.RemoteAddr&7 != 0):
		return qp.invalid(op, "atomic of %d bytes at %#x (needs 8 bytes, 8-aligned)", length, wr.RemoteAddr)
	case wr.Flags&SendInline != 0 && (length > uint64(qp.MaxInline()) || wr.Opcode == OpRDMARead || wr.Opcode.atomic()):
		return qp.invalid(op, "%d bytes inline with %v (at most %d)", length, wr.Opcode, qp.MaxInline())
	case wr.Flags&SendInline == 0 && sendWqeHdr+len(wr.SGE)*sgeSize > qp.sq.elemSize():
		return qp.invalid(op, "%d SGEs do not fit the queue's elements", len(wr.SGE))
	case length > 1<<31:
		return qp.invalid(op, "%d bytes", length)
	}
	var ahNum uint32
	if qp.typ == ib.QPTypeUD {
		if wr.AH == nil {
			return qp.invalid(op, "a UD send needs an address handle")
		}
		if ahNum = wr.AH.DriverNum(); ahNum == 0 {
			return fmt.Errorf("rxe: qp %d: %s: the address handle has no ah_num (a kernel before Linux 5.11): %w",
				qp.u.Num(), op, uverbs.ErrNotSupported)
		}
	}
	prod, ok := qp.sq.produce()
	if !ok {
		return fmt.Errorf("rxe: qp %d: %s: %w", qp.u.Num(), op, ErrQueueFull)
	}
	p := qp.sq.elem(prod)
	wqe := (*abi.RxeSendWqe)(p)
	*wqe = abi.RxeSendWqe{}
	wqe.Wr.WrID, wqe.Wr.Opcode, wqe.Wr.SendFlags = wr.ID, uint32(wr.Opcode), uint32(wr.Flags)
	if wr.Opcode == OpSendWithImm || wr.Opcode == OpRDMAWriteWithImm {
		wqe.Wr.Ex = bits.ReverseBytes32(wr.Imm)
	}
	u := unsafe.Pointer(&wqe.Wr.Wr[0])
	switch {
	case wr.Opcode.atomic():
		*(*uint64)(unsafe.Add(u, abi.RxeWrAtomicRemoteAddr)) = wr.RemoteAddr
		*(*uint64)(unsafe.Add(u, abi.RxeWrAtomicCompareAdd)) = wr.CompareAdd
		*(*uint64)(unsafe.Add(u, abi.RxeWrAtomicSwap)) = wr.Swap
		*(*uint32)(unsafe.Add(u, abi.RxeWrAtomicRkey)) = wr.RKey
	case qp.typ == ib.QPTypeUD:
		*(*uint32)(unsafe.Add(u, abi.RxeWrUDRemoteQpn)) = wr.RemoteQPN
		*(*uint32)(unsafe.Add(u, abi.RxeWrUDRemoteQkey)) = wr.RemoteQKey
		*(*uint32)(unsafe.Add(u, abi.RxeWrUDAhNum)) = ahNum
	case wr.Opcode != OpSend && wr.Opcode != OpSendWithImm:
		*(*uint64)(unsafe.Add(u, abi.RxeWrRdmaRemoteAddr)) = wr.RemoteAddr
		*(*uint32)(unsafe.Add(u, abi.RxeWrRdmaRkey)) = wr.RKey
	}
	data := unsafe.Add(p, sendWqeHdr)
	if wr.Flags&SendInline != 0 {
		off := uintptr(0)
		for i := range wr.SGE {
			s := &wr.SGE[i]
			copy(unsafe.Slice((*byte)(unsafe.Add(data, off)), s.Length), unsafe.Slice(addrPtr(s.Addr), s.Length))
			off += uintptr(s.Length)
		}
	} else {
		for i := range wr.SGE {
			s := &wr.SGE[i]
			*(*abi.RxeSge)(unsafe.Add(data, i*sgeSize)) = abi.RxeSge{Addr: s.Addr, Length: s.Length, Lkey: s.LKey}
		}
	}
	wqe.Iova = wr.RemoteAddr
	wqe.Dma.Length, wqe.Dma.Resid, wqe.Dma.NumSge = uint32(length), uint32(length), uint32(len(wr.SGE))
	wqe.Ssn = qp.ssn
	qp.ssn++
	qp.sq.publish(prod)
	return nil
}

// addrPtr turns a registered buffer's address back into a pointer, for
// copying inline data. The memory is outside the Go heap (an mmap).
func addrPtr(a uint64) *byte {
	return *(**byte)(unsafe.Pointer(&a))
}

// PostRecv posts one receive work request. A QP with an SRQ has no
// receive queue: post to the SRQ.
func (qp *QP) PostRecv(wr *RecvWR) error {
	qp.rqMu.Lock()
	defer qp.rqMu.Unlock()
	if qp.rq.mem == nil {
		if qp.sq.mem == nil {
			return errClosed
		}
		return qp.invalid("post recv", "the QP receives through an SRQ")
	}
	return postRecv(&qp.rq, wr, int(qp.cap.MaxRecvSGE), func(format string, args ...any) error {
		return qp.invalid("post recv", format, args...)
	})
}

// postRecv writes wr into a receive queue (a QP's or an SRQ's).
func postRecv(q *queue, wr *RecvWR, maxSGE int, invalid func(string, ...any) error) error {
	if len(wr.SGE) > maxSGE || recvWqeHdr+len(wr.SGE)*sgeSize > q.elemSize() {
		return invalid("%d SGEs, at most %d", len(wr.SGE), maxSGE)
	}
	prod, ok := q.produce()
	if !ok {
		return fmt.Errorf("rxe: post recv: %w", ErrQueueFull)
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

// Close unmaps the queues and destroys the QP. Safe to call more than
// once; if the kernel refuses the QP stays usable.
func (qp *QP) Close() error {
	qp.closeMu.Lock()
	defer qp.closeMu.Unlock()
	if qp.closed {
		return nil
	}
	if err := qp.u.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	qp.closed = true
	qp.sqMu.Lock()
	err := qp.sq.unmap()
	qp.page.free()
	qp.sqMu.Unlock()
	qp.rqMu.Lock()
	err = errors.Join(err, qp.rq.unmap())
	qp.rqMu.Unlock()
	return err
}
