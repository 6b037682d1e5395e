package abi

// The data path: the write() commands a provider sends on its hot path
// (rdma/ib_user_verbs.h) and the queues rxe shares with user space
// (rdma/rdma_user_rxe.h).

// Write commands of the data path (enum ib_uverbs_write_cmds).
const (
	IB_USER_VERBS_CMD_REQ_NOTIFY_CQ = 23
	IB_USER_VERBS_CMD_POST_SEND     = 28
)

// PostSend is struct ib_uverbs_post_send (rdma/ib_user_verbs.h); rxe's
// send doorbell is this command with no work requests.
type PostSend struct {
	Response uint64
	QpHandle uint32
	WrCount  uint32
	SgeCount uint32
	WqeSize  uint32
}

// PostSendResp is struct ib_uverbs_post_send_resp (rdma/ib_user_verbs.h).
type PostSendResp struct {
	BadWr uint32
}

// SizeofUverbsSendWr is sizeof(struct ib_uverbs_send_wr)
// (rdma/ib_user_verbs.h), the smallest wqe_size POST_SEND accepts.
const SizeofUverbsSendWr = 56

// ReqNotifyCq is struct ib_uverbs_req_notify_cq (rdma/ib_user_verbs.h).
type ReqNotifyCq struct {
	CqHandle      uint32
	SolicitedOnly uint32
}

// UverbsWc is struct ib_uverbs_wc (rdma/ib_user_verbs.h): rxe's CQ
// elements start with it.
type UverbsWc struct {
	WrID         uint64
	Status       uint32
	Opcode       uint32
	VendorErr    uint32
	ByteLen      uint32
	Ex           uint32 // imm_data (big-endian) or invalidate_rkey
	QpNum        uint32
	SrcQp        uint32
	WcFlags      uint32
	PkeyIndex    uint16
	Slid         uint16
	Sl           uint8
	DlidPathBits uint8
	PortNum      uint8
	Reserved     uint8
}

// RxeQueueBuf is struct rxe_queue_buf (rdma/rdma_user_rxe.h), the header
// of every queue rxe maps to user space; the elements follow it. The
// indices are kept masked by both sides.
type RxeQueueBuf struct {
	Log2ElemSize  uint32
	IndexMask     uint32
	Pad1          [30]uint32
	ProducerIndex uint32
	Pad2          [31]uint32
	ConsumerIndex uint32
	Pad3          [31]uint32
}

// RxeSge is struct rxe_sge (rdma/rdma_user_rxe.h).
type RxeSge struct {
	Addr   uint64
	Length uint32
	Lkey   uint32
}

// RxeDmaInfo is struct rxe_dma_info (rdma/rdma_user_rxe.h) without its
// flexible array (the SGEs or the inline data), which follows it.
type RxeDmaInfo struct {
	Length    uint32
	Resid     uint32
	CurSge    uint32
	NumSge    uint32
	SgeOffset uint32
	Reserved  uint32
}

// RxeSendWr is struct rxe_send_wr (rdma/rdma_user_rxe.h). Wr is the
// union; the RxeWr* offsets locate its members.
type RxeSendWr struct {
	WrID      uint64
	Reserved  uint32
	Opcode    uint32
	SendFlags uint32
	Ex        uint32 // imm_data (big-endian) or invalidate_rkey
	Wr        [120]byte
}

// Offsets inside RxeSendWr.Wr (the union wr of struct rxe_send_wr).
const (
	RxeWrRdmaRemoteAddr   = 0  // wr.rdma.remote_addr
	RxeWrRdmaRkey         = 8  // wr.rdma.rkey
	RxeWrAtomicRemoteAddr = 0  // wr.atomic.remote_addr
	RxeWrAtomicCompareAdd = 8  // wr.atomic.compare_add
	RxeWrAtomicSwap       = 16 // wr.atomic.swap
	RxeWrAtomicRkey       = 24 // wr.atomic.rkey
	RxeWrUDRemoteQpn      = 0  // wr.ud.remote_qpn
	RxeWrUDRemoteQkey     = 4  // wr.ud.remote_qkey
	RxeWrUDPkeyIndex      = 8  // wr.ud.pkey_index
	RxeWrUDAhNum          = 12 // wr.ud.ah_num
	RxeWrMwAddr           = 0  // wr.mw.addr
	RxeWrMwLength         = 8  // wr.mw.length
	RxeWrMwMrLkey         = 16 // wr.mw.mr_lkey
	RxeWrMwMwRkey         = 20 // wr.mw.mw_rkey
	RxeWrMwRkey           = 24 // wr.mw.rkey
	RxeWrMwAccess         = 28 // wr.mw.access
)

// RxeSendWqe is struct rxe_send_wqe (rdma/rdma_user_rxe.h) up to its
// dma.sge / dma.inline_data flexible array.
type RxeSendWqe struct {
	Wr          RxeSendWr
	Status      uint32
	State       uint32
	Iova        uint64
	Mask        uint32
	FirstPsn    uint32
	LastPsn     uint32
	AckLength   uint32
	Ssn         uint32
	HasRdAtomic uint32
	Dma         RxeDmaInfo
}

// RxeRecvWqe is struct rxe_recv_wqe (rdma/rdma_user_rxe.h) up to its
// dma.sge flexible array.
type RxeRecvWqe struct {
	WrID     uint64
	Reserved uint32
	Padding  uint32
	Dma      RxeDmaInfo
}
