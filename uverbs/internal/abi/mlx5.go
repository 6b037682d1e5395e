package abi

// The mlx5 driver data (rdma/mlx5-abi.h, MLX5_IB_UVERBS_ABI_VERSION 1).

// Mlx5IbAllocUcontextReqV2 is struct mlx5_ib_alloc_ucontext_req_v2: the
// driver input of GET_CONTEXT. The kernel takes exactly 8 bytes (the
// legacy struct mlx5_ib_alloc_ucontext_req, its first two fields) or at
// least 16 (up to and excluding MaxCqeVersion); anything else is EINVAL.
type Mlx5IbAllocUcontextReqV2 struct {
	TotalNumBfregs      uint32
	NumLowLatencyBfregs uint32
	Flags               uint32 // enum mlx5_ib_alloc_uctx_v2_flags
	CompMask            uint32 // must be 0
	MaxCqeVersion       uint8
	Reserved0           uint8
	Reserved1           uint16
	Reserved2           uint32
	LibCaps             uint64 // enum mlx5_lib_caps
}

// Request lengths of Mlx5IbAllocUcontextReqV2 that rdma-core falls back to
// on kernels that refuse the full one: offsetof(lib_caps) and
// offsetof(max_cqe_version).
const (
	Mlx5AllocUcontextReqLenNoLibCaps = 24
	Mlx5AllocUcontextReqLenMin       = 16
)

// enum mlx5_ib_alloc_uctx_v2_flags.
const MLX5_IB_ALLOC_UCTX_DEVX = 1 << 0

// enum mlx5_lib_caps.
const (
	MLX5_LIB_CAP_4K_UAR  = 1 << 0
	MLX5_LIB_CAP_DYN_UAR = 1 << 1
)

// CQE versions (rdma-core providers/mlx5: MLX5_CQE_VERSION_V1), the most
// the request offers.
const MLX5_CQE_VERSION_V1 = 1

// Blue-flame register constants of rdma-core's libmlx5
// (providers/mlx5/mlx5-abi.h), which choose the default
// total_num_bfregs and num_low_latency_bfregs.
const (
	MLX5_ADAPTER_PAGE_SIZE         = 4096
	MLX5_NUM_NON_FP_BFREGS_PER_UAR = 2
	MLX5_MAX_BFREGS                = 256 * MLX5_NUM_NON_FP_BFREGS_PER_UAR
	MLX5_DEF_TOT_UUARS             = 8 * MLX5_NUM_NON_FP_BFREGS_PER_UAR
	MLX5_MED_BFREGS_TSHOLD         = 12
	MLX5_DEF_NUM_LOW_LAT_UUARS     = 4
)

// Mlx5IbAllocUcontextResp is struct mlx5_ib_alloc_ucontext_resp: the
// driver output of GET_CONTEXT. ResponseLength is how many of its bytes
// the kernel filled.
type Mlx5IbAllocUcontextResp struct {
	QpTabSize          uint32
	BfRegSize          uint32
	TotBfregs          uint32
	CacheLineSize      uint32
	MaxSqDescSz        uint16
	MaxRqDescSz        uint16
	MaxSendWqebb       uint32
	MaxRecvWr          uint32
	MaxSrqRecvWr       uint32
	NumPorts           uint16
	FlowActionFlags    uint16
	CompMask           uint32 // enum mlx5_ib_alloc_ucontext_resp_mask
	ResponseLength     uint32
	CqeVersion         uint8
	CmdsSuppUhw        uint8 // enum mlx5_user_cmds_supp_uhw
	EthMinInline       uint8 // enum mlx5_user_inline_mode
	ClockInfoVersions  uint8
	HcaCoreClockOffset uint64
	LogUarSize         uint32
	NumUarsPerPage     uint32
	NumDynBfregs       uint32
	DumpFillMkey       uint32
}

// enum mlx5_ib_alloc_ucontext_resp_mask.
const (
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_CORE_CLOCK_OFFSET = 1 << 0
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY    = 1 << 1
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE               = 1 << 2
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_SQD2RTS           = 1 << 3
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_REAL_TIME_TS      = 1 << 4
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_MKEY_UPDATE_TAG   = 1 << 5
)

// enum mlx5_user_cmds_supp_uhw.
const (
	MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE = 1 << 0
	MLX5_USER_CMDS_SUPP_UHW_CREATE_AH    = 1 << 1
)

// enum mlx5_user_inline_mode (the response value is the firmware's plus
// one, so that 0 means "not reported").
const (
	MLX5_USER_INLINE_MODE_NA      = 0
	MLX5_USER_INLINE_MODE_NONE    = 1
	MLX5_USER_INLINE_MODE_L2      = 2
	MLX5_USER_INLINE_MODE_IP      = 3
	MLX5_USER_INLINE_MODE_TCP_UDP = 4
)

// The flow action flags of the GET_CONTEXT response (anonymous enum of
// MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_*).
const (
	MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM              = 1 << 0
	MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_REQ_METADATA = 1 << 1
	MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_SPI_STEERING = 1 << 2
	MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_FULL_OFFLOAD = 1 << 3
	MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_TX_IV_IS_ESN = 1 << 4
)

// Bit index of the clock_info_versions bitmap (MLX5_IB_CLOCK_INFO_V1).
const MLX5_IB_CLOCK_INFO_V1 = 0

// Mlx5IbAllocPdResp is struct mlx5_ib_alloc_pd_resp: the driver output of
// ALLOC_PD. mlx5 writes it unconditionally, so a caller without the
// 4-byte buffer gets EFAULT.
type Mlx5IbAllocPdResp struct {
	Pdn uint32
}

// Mlx5IbCreateAhResp is struct mlx5_ib_create_ah_resp: the driver output
// of CREATE_AH on RoCE ports (the kernel refuses an output shorter than
// offsetofend(dmac) with EINVAL).
type Mlx5IbCreateAhResp struct {
	ResponseLength uint32
	Dmac           [6]uint8
	Reserved       [6]uint8
}

// Mlx5IbCreateCq is struct mlx5_ib_create_cq (rdma/mlx5-abi.h): the
// driver input of CREATE_CQ. BufAddr and DbAddr are the CQ buffer and
// doorbell record that user space allocates and the kernel pins; the
// kernel refuses (EINVAL) a CqeSize other than 64 or 128 and nonzero
// reserved fields, and reads UarPageIndex only with
// MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX in Flags.
type Mlx5IbCreateCq struct {
	BufAddr          uint64
	DbAddr           uint64
	CqeSize          uint32
	CqeCompEn        uint8
	CqeCompResFormat uint8  // enum mlx5_ib_cqe_comp_res_format
	Flags            uint16 // enum mlx5_ib_create_cq_flags
	UarPageIndex     uint16
	Reserved0        uint16
	Reserved1        uint32
}

// enum mlx5_ib_create_cq_flags.
const (
	MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD   = 1 << 0
	MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX = 1 << 1
	MLX5_IB_CREATE_CQ_FLAGS_REAL_TIME_TS   = 1 << 2
)

// Mlx5IbCreateCqResp is struct mlx5_ib_create_cq_resp (rdma/mlx5-abi.h):
// the driver output of CREATE_CQ.
type Mlx5IbCreateCqResp struct {
	Cqn      uint32
	Reserved uint32
}

// Mlx5IbCreateSrq is struct mlx5_ib_create_srq (rdma/mlx5-abi.h): the
// driver input of CREATE_SRQ, with the SRQ buffer and doorbell record
// user space allocates (as Mlx5IbCreateCq). Uidx is read only from a
// context with CQE version 1.
type Mlx5IbCreateSrq struct {
	BufAddr   uint64
	DbAddr    uint64
	Flags     uint32 // MLX5_SRQ_FLAG_*
	Reserved0 uint32 // explicit padding
	Uidx      uint32
	Reserved1 uint32
}

// The flags of struct mlx5_ib_create_srq (anonymous enum of
// MLX5_SRQ_FLAG_*).
const MLX5_SRQ_FLAG_SIGNATURE = 1 << 0

// Mlx5IbCreateSrqResp is struct mlx5_ib_create_srq_resp
// (rdma/mlx5-abi.h): the driver output of CREATE_SRQ.
type Mlx5IbCreateSrqResp struct {
	Srqn     uint32
	Reserved uint32
}

// Mlx5IbCreateQpDciStreams is struct mlx5_ib_create_qp_dci_streams
// (rdma/mlx5-abi.h).
type Mlx5IbCreateQpDciStreams struct {
	LogNumConcurent uint8
	LogNumErrored   uint8
}

// Mlx5IbCreateQp is struct mlx5_ib_create_qp (rdma/mlx5-abi.h): the
// driver input of CREATE_QP, with the QP buffer (receive queue first,
// then the send queue) and doorbell record user space allocates (as
// Mlx5IbCreateCq). The kernel takes the queue sizes from here, not from
// the core command: SqWqeCount basic blocks of 64 bytes (a power of two)
// and RqWqeCount entries of 1<<RqWqeShift bytes. SqBufAddr is the union
// of sq_buf_addr (raw packet QPs' separate send queue) and access_key
// (DC targets).
type Mlx5IbCreateQp struct {
	BufAddr    uint64
	DbAddr     uint64
	SqWqeCount uint32
	RqWqeCount uint32
	RqWqeShift uint32
	Flags      uint32 // MLX5_QP_FLAG_*
	Uidx       uint32
	BfregIndex uint32 // read with MLX5_QP_FLAG_BFREG_INDEX or MLX5_QP_FLAG_UAR_PAGE_INDEX
	SqBufAddr  uint64 // or access_key
	EceOptions uint32
	DciStreams Mlx5IbCreateQpDciStreams
	Reserved   uint16
}

// The flags of struct mlx5_ib_create_qp (anonymous enum of
// MLX5_QP_FLAG_*).
const (
	MLX5_QP_FLAG_SIGNATURE                = 1 << 0
	MLX5_QP_FLAG_SCATTER_CQE              = 1 << 1
	MLX5_QP_FLAG_TUNNEL_OFFLOADS          = 1 << 2
	MLX5_QP_FLAG_BFREG_INDEX              = 1 << 3
	MLX5_QP_FLAG_TYPE_DCT                 = 1 << 4
	MLX5_QP_FLAG_TYPE_DCI                 = 1 << 5
	MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC     = 1 << 6
	MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC     = 1 << 7
	MLX5_QP_FLAG_ALLOW_SCATTER_CQE        = 1 << 8
	MLX5_QP_FLAG_PACKET_BASED_CREDIT_MODE = 1 << 9
	MLX5_QP_FLAG_UAR_PAGE_INDEX           = 1 << 10
	MLX5_QP_FLAG_DCI_STREAM               = 1 << 11
)

// Mlx5IbCreateQpResp is struct mlx5_ib_create_qp_resp
// (rdma/mlx5-abi.h): the driver output of CREATE_QP. BfregIndex is the
// blue-flame register the kernel gave the QP.
type Mlx5IbCreateQpResp struct {
	BfregIndex uint32
	EceOptions uint32
	CompMask   uint32 // enum mlx5_ib_create_qp_resp_mask
	Tirn       uint32
	Tisn       uint32
	Rqn        uint32
	Sqn        uint32
	Reserved1  uint32
	TirIcmAddr uint64
}

// The user index of a context with CQE version 0 (the kernel's
// MLX5_IB_DEFAULT_UIDX; libmlx5 sends it), and the bits a user index
// may use (MLX5_USER_ASSIGNED_UIDX_MASK).
const (
	MLX5_IB_DEFAULT_UIDX         = 0xffffff
	MLX5_USER_ASSIGNED_UIDX_MASK = 0xffffff
)

// Queue layout constants of rdma-core's libmlx5 (providers/mlx5/mlx5dv.h
// and mlx5.h): the send queue's basic block, the CQE's ownership value
// for "not yet written by hardware" (the high nibble of its last byte,
// op_own), and the 32-bit words of the doorbell records.
const (
	MLX5_SEND_WQE_BB    = 64
	MLX5_SEND_WQE_SHIFT = 6
	MLX5_CQE_INVALID    = 15
	MLX5_CQ_SET_CI      = 0
	MLX5_CQ_ARM_DB      = 1
	MLX5_RCV_DBR        = 0
	MLX5_SND_DBR        = 1
)
