package uverbs

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// siwCQ is a siw completion queue's mapped elements and control word.
type siwCQ struct {
	cq     *CQ
	mu     sync.Mutex
	ring   siwRing
	ctrl   *uint32 // struct siw_cq_ctrl's flags
	closed bool    // the data path is closed: the CQ is destroyed, or about to be unmapped
}

var siwCqeSize = unsafe.Sizeof(abi.SiwCqe{})

func (siwProvider) newCQ(cq *CQ, d driverIO) (cqOps, error) {
	if len(d.out) < kabi.Sizeof[abi.SiwUrespCreateCq]() {
		return nil, fmt.Errorf("driver response of %d bytes: %w", len(d.out), unix.EPROTO)
	}
	r := kabi.Decode[abi.SiwUrespCreateCq](d.out)
	ring, err := mapSIWRing(cq.ctx, "cq", r.CqKey, r.NumCqe, siwCqeSize, unsafe.Sizeof(abi.SiwCqCtrl{}))
	if err != nil {
		return nil, err
	}
	return &siwCQ{cq: cq, ring: ring, ctrl: (*uint32)(unsafe.Add(ring.base, uintptr(ring.n)*siwCqeSize))}, nil
}

// siwWCStatus and siwWCOpcode map siw's completion status and opcode to
// the verbs' (libsiw's map_cqe_status and map_cqe_opcode).
var siwWCStatus = [abi.SiwNumWcStatus]WCStatus{
	abi.SiwWcSuccess: WCSuccess, abi.SiwWcLocLenErr: WCLocLenErr, abi.SiwWcLocProtErr: WCLocProtErr,
	abi.SiwWcLocQpOpErr: WCLocQPOpErr, abi.SiwWcWrFlushErr: WCWRFlushErr, abi.SiwWcBadRespErr: WCBadRespErr,
	abi.SiwWcLocAccessErr: WCLocAccessErr, abi.SiwWcRemAccessErr: WCRemAccessErr,
	abi.SiwWcRemInvReqErr: WCRemInvReqErr, abi.SiwWcGeneralErr: WCGeneralErr,
}

var siwWCOpcode = [abi.SiwOpReceive + 1]WCOpcode{
	abi.SiwOpWrite: WCRDMAWrite, abi.SiwOpRead: WCRDMARead, abi.SiwOpReadLocalInv: WCRDMARead,
	abi.SiwOpSend: WCSend, abi.SiwOpSendWithImm: WCSend, abi.SiwOpSendRemoteInv: WCSend,
	abi.SiwOpFetchAndAdd: WCFetchAdd, abi.SiwOpCompAndSwap: WCCompSwap, abi.SiwOpReceive: WCRecv,
}

// siwUnknownOpcode is the opcode of a completion whose siw opcode is
// none of user space's (the kernel's own READ_RESPONSE, INVAL_STAG,
// REG_MR): it names no verb.
const siwUnknownOpcode WCOpcode = 0xff

// poll takes up to len(wc) completions: each slot whose flags have
// VALID, given back by storing 0 to them.
func (x *siwCQ) poll(wc []WC) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, x.cq.closedErr("poll cq")
	}
	n := 0
	for n < len(wc) {
		p := x.ring.slot(x.ring.count)
		fw := atomic.LoadUint32(flagsWord(p)) // acquire: the element is written
		if fw&abi.SiwWqeValid == 0 {
			break
		}
		e := (*abi.SiwCqe)(p)
		opcode, status := uint8(fw>>8), uint16(fw>>16)
		w := &wc[n]
		*w = WC{ID: e.ID, ByteLen: e.Bytes, QPNum: uint32(e.QpID), Status: WCGeneralErr, Opcode: siwUnknownOpcode}
		if int(status) < len(siwWCStatus) {
			w.Status = siwWCStatus[status]
		}
		if int(opcode) < len(siwWCOpcode) {
			w.Opcode = siwWCOpcode[opcode]
		}
		if fw&abi.SiwWqeRemInval != 0 {
			w.Flags, w.InvRKey = WCWithInv, uint32(e.Imm)
		}
		atomic.StoreUint32(flagsWord(p), 0) // release: the slot is the kernel's again
		x.ring.count++
		n++
	}
	return n, nil
}

// requestNotify arms the CQ by a store into its control word, as libsiw
// does: the kernel reads it when it writes a completion, and clears it
// when it raises the event.
func (x *siwCQ) requestNotify(solicitedOnly bool) error {
	v := uint32(abi.SiwNotifySolicited | abi.SiwNotifyNextCompletion)
	if solicitedOnly {
		v = abi.SiwNotifySolicited
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return x.cq.closedErr("req notify cq")
	}
	atomic.StoreUint32(x.ctrl, v)
	return nil
}

// produced counts the completions the kernel has written: those polled
// and the VALID ones waiting, which follow each other from the next
// slot.
func (x *siwCQ) produced() uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0
	}
	waiting := uint32(0)
	for waiting < x.ring.n && atomic.LoadUint32(flagsWord(x.ring.slot(x.ring.count+waiting)))&abi.SiwWqeValid != 0 {
		waiting++
	}
	return x.ring.count + waiting
}

// resized cannot happen: iWARP has no CQ resize (ResizeCQ refuses it).
func (x *siwCQ) resized() error { return x.cq.ctx.unsupported("resize cq", "resizing a CQ") }

func (x *siwCQ) release() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	return x.ring.unmap()
}
