package uverbs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Opcode is a send work request's operation (enum ib_uverbs_wr_opcode,
// IBV_WR_*).
type Opcode uint32

// Send opcodes (what each transport carries: Opcode.onIWARP).
const (
	OpRDMAWrite        Opcode = 0 // IB_UVERBS_WR_RDMA_WRITE
	OpRDMAWriteWithImm Opcode = 1 // IB_UVERBS_WR_RDMA_WRITE_WITH_IMM
	OpSend             Opcode = 2 // IB_UVERBS_WR_SEND
	OpSendWithImm      Opcode = 3 // IB_UVERBS_WR_SEND_WITH_IMM
	OpRDMARead         Opcode = 4 // IB_UVERBS_WR_RDMA_READ
	OpAtomicCmpAndSwp  Opcode = 5 // IB_UVERBS_WR_ATOMIC_CMP_AND_SWP
	OpAtomicFetchAdd   Opcode = 6 // IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD
	OpLocalInv         Opcode = 7 // IB_UVERBS_WR_LOCAL_INV: invalidate InvalidateRKey here
	OpBindMW           Opcode = 8 // IB_UVERBS_WR_BIND_MW: bind a type 2 window
	OpSendWithInv      Opcode = 9 // IB_UVERBS_WR_SEND_WITH_INV: send, and invalidate InvalidateRKey at the peer
)

var opNames = [...]string{"RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "SEND", "SEND_WITH_IMM", "RDMA_READ",
	"ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD", "LOCAL_INV", "BIND_MW", "SEND_WITH_INV"}

// String returns libibverbs' name without IBV_WR_.
func (o Opcode) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Opcode(%d)", uint32(o))
}

func (o Opcode) atomic() bool { return o == OpAtomicCmpAndSwp || o == OpAtomicFetchAdd }

// onIWARP reports whether an iWARP device carries the opcode: no
// immediate data, atomics, memory windows or local invalidation from
// user space (rdma-core's libsiw maps no others).
func (o Opcode) onIWARP() bool {
	return o == OpRDMAWrite || o == OpSend || o == OpRDMARead || o == OpSendWithInv
}

// SendFlags modify a send work request (enum ib_uverbs_send_flags).
type SendFlags uint32

// Send flags.
const (
	SendFence     SendFlags = 1 << 0 // IB_UVERBS_SEND_FENCE
	SendSignaled  SendFlags = 1 << 1 // IB_UVERBS_SEND_SIGNALED: complete with a CQE
	SendSolicited SendFlags = 1 << 2 // IB_UVERBS_SEND_SOLICITED
	SendInline    SendFlags = 1 << 3 // IB_UVERBS_SEND_INLINE: copy the data into the WQE
)

// String lists the flags.
func (f SendFlags) String() string {
	s := ""
	for i, n := range []string{"FENCE", "SIGNALED", "SOLICITED", "INLINE"} {
		if f&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if rest := f &^ 0xf; rest != 0 || s == "" {
		if s != "" {
			s += "|"
		}
		s += fmt.Sprintf("%#x", uint32(rest))
	}
	return s
}

// SGE is a scatter/gather element: Length bytes at Addr of a region
// registered with LKey (struct ibv_sge).
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// ErrQueueFull is matched by the error of a post to a full queue
// (libibverbs' ENOMEM).
var ErrQueueFull = fmt.Errorf("queue full: %w", unix.ENOMEM)

// SendWR is a send work request (struct ibv_send_wr).
type SendWR struct {
	ID     uint64
	Opcode Opcode
	Flags  SendFlags
	Imm    uint32 // immediate data, host order (sent big-endian)
	SGE    []SGE

	// Inline, when not empty, is the request's data itself: PostSend
	// copies these bytes into the work queue element, so they need be
	// neither registered nor outside the Go heap, and are only read
	// during the call (the caller may reuse them as soon as it
	// returns). It implies SendInline, takes the place of SGE (a request
	// with both is refused), and holds at most QP.MaxInline bytes; it
	// carries the data of a SEND or an RDMA WRITE (with or without
	// immediate or invalidation, as the transport allows), never a READ's
	// or an atomic's. This is one copy, where SendInline with SGEs copies
	// from registered memory that the caller filled first.
	Inline []byte

	// RDMA and atomics: the remote address and its region's key.
	RemoteAddr uint64
	RKey       uint32
	// Atomics: the compare (CMP_AND_SWP) or add (FETCH_AND_ADD) operand,
	// and the swap value.
	CompareAdd uint64
	Swap       uint64

	// UD: the address handle, the remote QP and its Q_Key.
	AH         *AH
	RemoteQPN  uint32
	RemoteQKey uint32

	// OpBindMW: the window, the key it is to have (MW.NextRKey) and what
	// it is bound to.
	MW     *MW
	MWRKey uint32
	MWBind MWBind

	// OpLocalInv and OpSendWithInv: the key to invalidate.
	InvalidateRKey uint32
}

// RecvWR is a receive work request (struct ibv_recv_wr).
type RecvWR struct {
	ID  uint64
	SGE []SGE
}
