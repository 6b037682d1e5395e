package abi

// The commands that change an existing object: RESIZE_CQ, MODIFY_SRQ and
// REREG_MR (rdma/ib_user_verbs.h), with rxe's driver data for them
// (rdma/rdma_user_rxe.h).

// Write commands (enum ib_uverbs_write_cmds).
const (
	IB_USER_VERBS_CMD_REREG_MR  = 11
	IB_USER_VERBS_CMD_RESIZE_CQ = 19
)

// ResizeCq is struct ib_uverbs_resize_cq.
type ResizeCq struct {
	Response uint64
	CqHandle uint32
	Cqe      uint32
}

// ResizeCqResp is struct ib_uverbs_resize_cq_resp.
type ResizeCqResp struct {
	Cqe      uint32
	Reserved uint32
}

// RxeResizeCqResp is struct rxe_resize_cq_resp: the mmap cookie of the
// resized queue. rxe refuses (EINVAL) a RESIZE_CQ without room for it.
type RxeResizeCqResp struct {
	Mi MmInfo
}

// ModifySrq is struct ib_uverbs_modify_srq (no response).
type ModifySrq struct {
	SrqHandle uint32
	AttrMask  uint32
	MaxWr     uint32
	SrqLimit  uint32
}

// SRQ attribute mask bits (enum ib_srq_attr_mask, include/rdma/ib_verbs.h;
// libibverbs' IBV_SRQ_MAX_WR and IBV_SRQ_LIMIT).
const (
	IB_SRQ_MAX_WR = 1 << 0
	IB_SRQ_LIMIT  = 1 << 1
)

// RxeModifySrqCmd is struct rxe_modify_srq_cmd: the user address where
// rxe writes the struct mminfo of a resized queue. rxe refuses (EINVAL) a
// MODIFY_SRQ without it.
type RxeModifySrqCmd struct {
	MmapInfoAddr uint64
}

// ReregMr is struct ib_uverbs_rereg_mr.
type ReregMr struct {
	Response    uint64
	MrHandle    uint32
	Flags       uint32
	Start       uint64
	Length      uint64
	HcaVa       uint64
	PdHandle    uint32
	AccessFlags uint32
}

// ReregMrResp is struct ib_uverbs_rereg_mr_resp.
type ReregMrResp struct {
	Lkey uint32
	Rkey uint32
}

// REREG_MR flags (enum ib_mr_rereg_flags, include/rdma/ib_verbs.h;
// libibverbs' IBV_REREG_MR_CHANGE_*).
const (
	IB_MR_REREG_TRANS  = 1 << 0
	IB_MR_REREG_PD     = 1 << 1
	IB_MR_REREG_ACCESS = 1 << 2
)
