package abi

// The queues siw shares with user space (rdma/siw-abi.h): each is kernel
// memory the process maps at the key the create command returned. No
// indices are shared: a slot belongs to whoever its flags say.

// SiwInvalUobjKey is SIW_INVAL_UOBJ_KEY, which the kernel leaves in a
// response only on a create that failed. It is no sign of "nothing to
// map": a context's mmap offsets are handed out from page 0, so its 145th
// page is at this very offset, and a create that succeeds can return it
// (libsiw refuses it, and fails every create from there on). What has no
// queue is known otherwise: a QP that receives through an SRQ has no
// receive queue (its rq_key is 0).
const SiwInvalUobjKey = 0x08FFFF + 1

// SiwMaxSge is SIW_MAX_SGE; SiwMaxInline is SIW_MAX_INLINE, the inline
// bytes a send queue element carries over sge[1..].
const (
	SiwMaxSge    = 6
	SiwMaxInline = 16 * (SiwMaxSge - 1)
)

// Flags of a queue element (enum siw_wqe_flags).
const (
	SiwWqeValid     = 1
	SiwWqeInline    = 1 << 1
	SiwWqeSignalled = 1 << 2
	SiwWqeSolicited = 1 << 3
	SiwWqeReadFence = 1 << 4
	SiwWqeRemInval  = 1 << 5
	SiwWqeCompleted = 1 << 6
)

// Opcodes (enum siw_opcode).
const (
	SiwOpWrite         = 0
	SiwOpRead          = 1
	SiwOpReadLocalInv  = 2
	SiwOpSend          = 3
	SiwOpSendWithImm   = 4
	SiwOpSendRemoteInv = 5
	SiwOpFetchAndAdd   = 6
	SiwOpCompAndSwap   = 7
	SiwOpReceive       = 8
	SiwNumOpcodes      = 12
)

// Completion statuses (enum siw_wc_status).
const (
	SiwWcSuccess      = 0
	SiwWcLocLenErr    = 1
	SiwWcLocProtErr   = 2
	SiwWcLocQpOpErr   = 3
	SiwWcWrFlushErr   = 4
	SiwWcBadRespErr   = 5
	SiwWcLocAccessErr = 6
	SiwWcRemAccessErr = 7
	SiwWcRemInvReqErr = 8
	SiwWcGeneralErr   = 9
	SiwNumWcStatus    = 10
)

// Arming flags of struct siw_cq_ctrl (enum siw_notify_flags).
const (
	SiwNotifySolicited      = 1
	SiwNotifyNextCompletion = 1 << 1
)

// SiwSge is struct siw_sge, laid out as struct ibv_sge.
type SiwSge struct {
	Laddr  uint64
	Length uint32
	Lkey   uint32
}

// SiwSqe is struct siw_sqe, a send queue element. Flags, NumSge and
// Opcode share the 32-bit word at offset 8, which a provider stores last
// (flags with VALID hand the slot to the kernel).
type SiwSqe struct {
	ID     uint64
	Flags  uint16
	NumSge uint8
	Opcode uint8
	Rkey   uint32
	Raddr  uint64
	Sge    [SiwMaxSge]SiwSge
}

// SiwRqe is struct siw_rqe, a receive queue element.
type SiwRqe struct {
	ID     uint64
	Flags  uint16
	NumSge uint8
	Opcode uint8
	Unused uint32
	Sge    [SiwMaxSge]SiwSge
}

// SiwCqe is struct siw_cqe, a completion queue element; the kernel writes
// Flags last.
type SiwCqe struct {
	ID     uint64
	Flags  uint8
	Opcode uint8
	Status uint16
	Bytes  uint32
	Imm    uint64 // imm_data, or inval_stag in its low 32 bits
	QpID   uint64
}

// SiwCqCtrl is struct siw_cq_ctrl, after a CQ's elements in its mapping.
type SiwCqCtrl struct {
	Flags uint32
	Pad   uint32
}
