package abi

// The ioctl methods that create and destroy CQs, QPs and SRQs
// (rdma/ib_user_ioctl_cmds.h), which libibverbs prefers to the write()
// commands where the kernel has them.

// Methods of UVERBS_OBJECT_CQ (enum uverbs_methods_cq).
const (
	UVERBS_METHOD_CQ_CREATE  = 0
	UVERBS_METHOD_CQ_DESTROY = 1
)

// Attributes of UVERBS_METHOD_CQ_CREATE
// (enum uverbs_attrs_create_cq_cmd_attr_ids).
const (
	UVERBS_ATTR_CREATE_CQ_HANDLE       = 0
	UVERBS_ATTR_CREATE_CQ_CQE          = 1
	UVERBS_ATTR_CREATE_CQ_USER_HANDLE  = 2
	UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL = 3
	UVERBS_ATTR_CREATE_CQ_COMP_VECTOR  = 4
	UVERBS_ATTR_CREATE_CQ_FLAGS        = 5
	UVERBS_ATTR_CREATE_CQ_RESP_CQE     = 6
	UVERBS_ATTR_CREATE_CQ_EVENT_FD     = 7
)

// Attributes of UVERBS_METHOD_CQ_DESTROY
// (enum uverbs_attrs_destroy_cq_cmd_attr_ids).
const (
	UVERBS_ATTR_DESTROY_CQ_HANDLE = 0
	UVERBS_ATTR_DESTROY_CQ_RESP   = 1
)

// Methods of UVERBS_OBJECT_QP (enum uverbs_methods_qp).
const (
	UVERBS_METHOD_QP_CREATE  = 0
	UVERBS_METHOD_QP_DESTROY = 1
)

// Attributes of UVERBS_METHOD_QP_CREATE
// (enum uverbs_attrs_create_qp_cmd_attr_ids).
const (
	UVERBS_ATTR_CREATE_QP_HANDLE         = 0
	UVERBS_ATTR_CREATE_QP_XRCD_HANDLE    = 1
	UVERBS_ATTR_CREATE_QP_PD_HANDLE      = 2
	UVERBS_ATTR_CREATE_QP_SRQ_HANDLE     = 3
	UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE = 4
	UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE = 5
	UVERBS_ATTR_CREATE_QP_IND_TABLE      = 6
	UVERBS_ATTR_CREATE_QP_USER_HANDLE    = 7
	UVERBS_ATTR_CREATE_QP_CAP            = 8
	UVERBS_ATTR_CREATE_QP_TYPE           = 9
	UVERBS_ATTR_CREATE_QP_FLAGS          = 10
	UVERBS_ATTR_CREATE_QP_SOURCE_QPN     = 11
	UVERBS_ATTR_CREATE_QP_EVENT_FD       = 12
	UVERBS_ATTR_CREATE_QP_RESP_CAP       = 13
	UVERBS_ATTR_CREATE_QP_RESP_QP_NUM    = 14
)

// Attributes of UVERBS_METHOD_QP_DESTROY
// (enum uverbs_attrs_destroy_qp_cmd_attr_ids).
const (
	UVERBS_ATTR_DESTROY_QP_HANDLE = 0
	UVERBS_ATTR_DESTROY_QP_RESP   = 1
)

// IB_UVERBS_QP_CREATE_SQ_SIG_ALL (enum ib_uverbs_create_qp_flags,
// rdma/ib_user_ioctl_verbs.h): the ioctl form of sq_sig_all.
const IB_UVERBS_QP_CREATE_SQ_SIG_ALL = 1 << 12

// QpCap is struct ib_uverbs_qp_cap (rdma/ib_user_ioctl_verbs.h).
type QpCap struct {
	MaxSendWr     uint32
	MaxRecvWr     uint32
	MaxSendSge    uint32
	MaxRecvSge    uint32
	MaxInlineData uint32
}

// Methods of UVERBS_OBJECT_SRQ (enum uverbs_methods_srq).
const (
	UVERBS_METHOD_SRQ_CREATE  = 0
	UVERBS_METHOD_SRQ_DESTROY = 1
)

// Attributes of UVERBS_METHOD_SRQ_CREATE
// (enum uverbs_attrs_create_srq_cmd_attr_ids).
const (
	UVERBS_ATTR_CREATE_SRQ_HANDLE       = 0
	UVERBS_ATTR_CREATE_SRQ_PD_HANDLE    = 1
	UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE  = 2
	UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE    = 3
	UVERBS_ATTR_CREATE_SRQ_USER_HANDLE  = 4
	UVERBS_ATTR_CREATE_SRQ_MAX_WR       = 5
	UVERBS_ATTR_CREATE_SRQ_MAX_SGE      = 6
	UVERBS_ATTR_CREATE_SRQ_LIMIT        = 7
	UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS = 8
	UVERBS_ATTR_CREATE_SRQ_TYPE         = 9
	UVERBS_ATTR_CREATE_SRQ_EVENT_FD     = 10
	UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR  = 11
	UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE = 12
	UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM = 13
)

// Attributes of UVERBS_METHOD_SRQ_DESTROY
// (enum uverbs_attrs_destroy_srq_cmd_attr_ids).
const (
	UVERBS_ATTR_DESTROY_SRQ_HANDLE = 0
	UVERBS_ATTR_DESTROY_SRQ_RESP   = 1
)

// IB_UVERBS_SRQT_BASIC (enum ib_uverbs_srq_type).
const IB_UVERBS_SRQT_BASIC = 0
