package abi

// MmInfo is struct mminfo (rdma/rdma_user_rxe.h): the mmap cookie of a
// queue rxe shares with user space.
type MmInfo struct {
	Offset uint64
	Size   uint32
	Pad    uint32
}

// RxeCreateCqResp is struct rxe_create_cq_resp (rdma/rdma_user_rxe.h).
type RxeCreateCqResp struct {
	Mi MmInfo
}

// RxeCreateQpResp is struct rxe_create_qp_resp (rdma/rdma_user_rxe.h).
type RxeCreateQpResp struct {
	RqMi MmInfo
	SqMi MmInfo
}

// RxeCreateSrqResp is struct rxe_create_srq_resp (rdma/rdma_user_rxe.h).
type RxeCreateSrqResp struct {
	Mi       MmInfo
	SrqNum   uint32
	Reserved uint32
}

// RxeCreateAhResp is struct rxe_create_ah_resp (rdma/rdma_user_rxe.h).
type RxeCreateAhResp struct {
	AhNum    uint32
	Reserved uint32
}

// SiwUrespAllocCtx is struct siw_uresp_alloc_ctx (rdma/siw-abi.h).
type SiwUrespAllocCtx struct {
	DevID uint32
	Pad   uint32
}

// SiwUrespCreateCq is struct siw_uresp_create_cq (rdma/siw-abi.h).
type SiwUrespCreateCq struct {
	CqID   uint32
	NumCqe uint32
	CqKey  uint64
}

// SiwUrespCreateQp is struct siw_uresp_create_qp (rdma/siw-abi.h).
type SiwUrespCreateQp struct {
	QpID   uint32
	NumSqe uint32
	NumRqe uint32
	Pad    uint32
	SqKey  uint64
	RqKey  uint64
}

// SiwUrespCreateSrq is struct siw_uresp_create_srq (rdma/siw-abi.h).
type SiwUrespCreateSrq struct {
	NumRqe uint32
	Pad    uint32
	SrqKey uint64
}

// SiwUreqRegMr is struct siw_ureq_reg_mr (rdma/siw-abi.h).
type SiwUreqRegMr struct {
	StagKey  uint8
	Reserved [3]uint8
	Pad      uint32
}

// SiwUrespRegMr is struct siw_uresp_reg_mr (rdma/siw-abi.h).
type SiwUrespRegMr struct {
	Stag uint32
	Pad  uint32
}
