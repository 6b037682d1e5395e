package uverbs

import (
	"fmt"
	"net"
	"os"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// MLX5Context is what the mlx5 driver reports when a context is created
// (struct mlx5_ib_alloc_ucontext_resp, rdma/mlx5-abi.h), with what this
// package asked for. Context.MLX5 returns it for mlx5 devices.
//
// The request is the one rdma-core's libmlx5 sends by default: 16 static
// blue-flame registers (more on systems with pages larger than 4 KiB), 4
// of them low-latency, CQE version 1, the 4K-UAR and dynamic-UAR library
// capabilities and a DEVX user context. Like libmlx5 it retries a refused
// request with shorter forms (without lib_caps, then without
// max_cqe_version) and then without DEVX.
type MLX5Context struct {
	// What was asked and granted.
	RequestedBFRegs       uint32 // total_num_bfregs sent
	RequestedLowLatBFRegs uint32 // num_low_latency_bfregs sent
	RequestLen            int    // bytes of the request the kernel accepted: 32, 24 or 16
	DEVX                  bool   // the context has a DEVX user context (the kernel accepted MLX5_IB_ALLOC_UCTX_DEVX)
	ResponseLength        uint32 // bytes of the response the kernel filled; later fields are zero
	QPTableSize           uint32
	BFRegSize             uint32 // blue-flame register size in bytes; 0 without blue flame (e.g. VFs)
	TotalBFRegs           uint32 // static bfregs allocated (the request rounded up to whole UAR pages)
	CacheLineSize         uint32 // the kernel's cache line size, for buffer alignment
	MaxSQDescSize         uint16 // largest send WQE, bytes
	MaxRQDescSize         uint16 // largest receive WQE, bytes
	MaxSendWQEBB          uint32 // send queue size limit in 64-byte basic blocks
	MaxRecvWR             uint32
	MaxSRQRecvWR          uint32
	NumPorts              uint16
	FlowActionFlags       MLX5FlowActionFlags
	Mask                  MLX5ContextMask // which optional fields and features the kernel reports
	CQEVersion            uint8           // the CQE format the driver uses for this context (0 or 1)
	CmdsSuppUHW           MLX5CmdsSuppUHW // commands that take mlx5 driver data
	EthMinInline          MLX5InlineMode  // minimum inline header mode for Ethernet (RoCE, raw) sends
	ClockInfoVersions     uint8           // bit 0: the clock info page (version 1) can be mapped
	HCACoreClockOffset    uint64          // offset of the HCA core clock in its page; valid with MLX5MaskCoreClockOffset
	LogUARSize            uint32          // log2 of the UAR size; 0 with NumUARsPerPage 0 from old kernels (one UAR per system page)
	NumUARsPerPage        uint32
	NumDynBFRegs          uint32 // bfregs a provider may allocate dynamically
	DumpFillMKey          uint32 // valid with MLX5MaskDumpFillMKey
}

// UARSize is the size in bytes of one UAR: 1<<LogUARSize, or the system
// page size from kernels that do not report it.
func (m *MLX5Context) UARSize() int {
	if m.LogUARSize == 0 && m.NumUARsPerPage == 0 || m.LogUARSize >= 31 {
		return os.Getpagesize()
	}
	return 1 << m.LogUARSize
}

// EthMinInlineBytes is the number of header bytes an Ethernet send must
// inline, as libmlx5 derives it: 0 when the kernel reports mode NONE,
// otherwise the 18-byte L2 header (also when the kernel reports nothing).
func (m *MLX5Context) EthMinInlineBytes() int {
	if m.EthMinInline == MLX5InlineNone {
		return 0
	}
	return 18
}

// MLX5ContextMask is the comp_mask of the GET_CONTEXT response (enum
// mlx5_ib_alloc_ucontext_resp_mask).
type MLX5ContextMask uint32

// MLX5 context response mask bits.
const (
	MLX5MaskCoreClockOffset MLX5ContextMask = abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_CORE_CLOCK_OFFSET
	MLX5MaskDumpFillMKey    MLX5ContextMask = abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY
	MLX5MaskECE             MLX5ContextMask = abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE
	MLX5MaskSQD2RTS         MLX5ContextMask = abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_SQD2RTS
	MLX5MaskRealTimeTS      MLX5ContextMask = abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_REAL_TIME_TS
	MLX5MaskMKeyUpdateTag   MLX5ContextMask = abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_MKEY_UPDATE_TAG
)

// String lists the bits.
func (m MLX5ContextMask) String() string {
	return flagString(uint64(m), []flag{{1 << 0, "CORE_CLOCK_OFFSET"}, {1 << 1, "DUMP_FILL_MKEY"}, {1 << 2, "ECE"},
		{1 << 3, "SQD2RTS"}, {1 << 4, "REAL_TIME_TS"}, {1 << 5, "MKEY_UPDATE_TAG"}})
}

// MLX5CmdsSuppUHW is the set of commands that accept mlx5 driver data
// (enum mlx5_user_cmds_supp_uhw).
type MLX5CmdsSuppUHW uint8

// Commands with mlx5 driver data.
const (
	MLX5SuppUHWQueryDevice MLX5CmdsSuppUHW = abi.MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE
	MLX5SuppUHWCreateAH    MLX5CmdsSuppUHW = abi.MLX5_USER_CMDS_SUPP_UHW_CREATE_AH
)

// String lists the commands.
func (s MLX5CmdsSuppUHW) String() string {
	return flagString(uint64(s), []flag{{1 << 0, "QUERY_DEVICE"}, {1 << 1, "CREATE_AH"}})
}

// MLX5FlowActionFlags is the set of flow actions the device offers (the
// MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_* bits).
type MLX5FlowActionFlags uint16

// Flow action flags.
const (
	MLX5FlowActionESPAESGCM            MLX5FlowActionFlags = abi.MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM
	MLX5FlowActionESPAESGCMReqMetadata MLX5FlowActionFlags = abi.MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_REQ_METADATA
	MLX5FlowActionESPAESGCMSPISteering MLX5FlowActionFlags = abi.MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_SPI_STEERING
	MLX5FlowActionESPAESGCMFullOffload MLX5FlowActionFlags = abi.MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_FULL_OFFLOAD
	MLX5FlowActionESPAESGCMTxIVIsESN   MLX5FlowActionFlags = abi.MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_TX_IV_IS_ESN
)

// String lists the flags.
func (f MLX5FlowActionFlags) String() string {
	return flagString(uint64(f), []flag{{1 << 0, "ESP_AES_GCM"}, {1 << 1, "ESP_AES_GCM_REQ_METADATA"},
		{1 << 2, "ESP_AES_GCM_SPI_STEERING"}, {1 << 3, "ESP_AES_GCM_FULL_OFFLOAD"}, {1 << 4, "ESP_AES_GCM_TX_IV_IS_ESN"}})
}

// MLX5InlineMode is the minimum inline mode for Ethernet sends (enum
// mlx5_user_inline_mode; the kernel adds one to the firmware's value so
// that zero means "not reported").
type MLX5InlineMode uint8

// Inline modes.
const (
	MLX5InlineNA     MLX5InlineMode = abi.MLX5_USER_INLINE_MODE_NA
	MLX5InlineNone   MLX5InlineMode = abi.MLX5_USER_INLINE_MODE_NONE
	MLX5InlineL2     MLX5InlineMode = abi.MLX5_USER_INLINE_MODE_L2
	MLX5InlineIP     MLX5InlineMode = abi.MLX5_USER_INLINE_MODE_IP
	MLX5InlineTCPUDP MLX5InlineMode = abi.MLX5_USER_INLINE_MODE_TCP_UDP
)

// String returns the mode's name.
func (m MLX5InlineMode) String() string {
	switch m {
	case MLX5InlineNA:
		return "NA"
	case MLX5InlineNone:
		return "NONE"
	case MLX5InlineL2:
		return "L2"
	case MLX5InlineIP:
		return "IP"
	case MLX5InlineTCPUDP:
		return "TCP_UDP"
	}
	return fmt.Sprintf("MLX5InlineMode(%d)", uint8(m))
}

// MLX5 returns what the mlx5 driver reported when the context was
// created, or nil for other drivers.
func (c *Context) MLX5() *MLX5Context { return c.mlx5 }

// mlx5DefaultBFRegs is libmlx5's default total_num_bfregs and
// num_low_latency_bfregs for a system page size: at least the bfregs of
// one system page, 16 by default, in whole UARs; 4 low-latency ones, or
// all beyond the 12 medium-latency ones.
func mlx5DefaultBFRegs(pageSize int) (total, lowLat uint32) {
	t := max(pageSize/abi.MLX5_ADAPTER_PAGE_SIZE*abi.MLX5_NUM_NON_FP_BFREGS_PER_UAR, abi.MLX5_DEF_TOT_UUARS)
	t = (t + abi.MLX5_NUM_NON_FP_BFREGS_PER_UAR - 1) / abi.MLX5_NUM_NON_FP_BFREGS_PER_UAR * abi.MLX5_NUM_NON_FP_BFREGS_PER_UAR
	t = min(t, abi.MLX5_MAX_BFREGS)
	return uint32(t), uint32(max(abi.MLX5_DEF_NUM_LOW_LAT_UUARS, t-abi.MLX5_MED_BFREGS_TSHOLD))
}

// mlx5GetContextAttempt is one form of the GET_CONTEXT driver request.
type mlx5GetContextAttempt struct {
	req  abi.Mlx5IbAllocUcontextReqV2
	size int
}

func (a *mlx5GetContextAttempt) bytes() []byte { return kabi.Bytes(&a.req)[:a.size] }

// mlx5GetContextAttempts lists the GET_CONTEXT driver requests in the
// order libmlx5 tries them: with DEVX, each at 32, 24 and 16 bytes, then
// the same without DEVX.
func mlx5GetContextAttempts(pageSize int) []mlx5GetContextAttempt {
	total, lowLat := mlx5DefaultBFRegs(pageSize)
	var out []mlx5GetContextAttempt
	for _, flags := range []uint32{abi.MLX5_IB_ALLOC_UCTX_DEVX, 0} {
		for _, size := range []int{kabi.Sizeof[abi.Mlx5IbAllocUcontextReqV2](), abi.Mlx5AllocUcontextReqLenNoLibCaps, abi.Mlx5AllocUcontextReqLenMin} {
			out = append(out, mlx5GetContextAttempt{size: size, req: abi.Mlx5IbAllocUcontextReqV2{
				TotalNumBfregs: total, NumLowLatencyBfregs: lowLat, Flags: flags,
				MaxCqeVersion: abi.MLX5_CQE_VERSION_V1, LibCaps: abi.MLX5_LIB_CAP_4K_UAR | abi.MLX5_LIB_CAP_DYN_UAR}})
		}
	}
	return out
}

// decodeMLX5Context decodes the GET_CONTEXT driver response that answered
// request a.
func decodeMLX5Context(a *mlx5GetContextAttempt, b []byte) *MLX5Context {
	r := kabi.Decode[abi.Mlx5IbAllocUcontextResp](b)
	return &MLX5Context{
		RequestedBFRegs: a.req.TotalNumBfregs, RequestedLowLatBFRegs: a.req.NumLowLatencyBfregs, RequestLen: a.size,
		DEVX: a.req.Flags&abi.MLX5_IB_ALLOC_UCTX_DEVX != 0, ResponseLength: r.ResponseLength,
		QPTableSize: r.QpTabSize, BFRegSize: r.BfRegSize, TotalBFRegs: r.TotBfregs, CacheLineSize: r.CacheLineSize,
		MaxSQDescSize: r.MaxSqDescSz, MaxRQDescSize: r.MaxRqDescSz, MaxSendWQEBB: r.MaxSendWqebb, MaxRecvWR: r.MaxRecvWr,
		MaxSRQRecvWR: r.MaxSrqRecvWr, NumPorts: r.NumPorts, FlowActionFlags: MLX5FlowActionFlags(r.FlowActionFlags),
		Mask: MLX5ContextMask(r.CompMask), CQEVersion: r.CqeVersion, CmdsSuppUHW: MLX5CmdsSuppUHW(r.CmdsSuppUhw),
		EthMinInline: MLX5InlineMode(r.EthMinInline), ClockInfoVersions: r.ClockInfoVersions,
		HCACoreClockOffset: r.HcaCoreClockOffset, LogUARSize: r.LogUarSize, NumUARsPerPage: r.NumUarsPerPage,
		NumDynBFRegs: r.NumDynBfregs, DumpFillMKey: r.DumpFillMkey,
	}
}

// mlx5Provider is mlx5's control path: its driver data, and the
// destination MAC of its AHs. Its prepare hooks express the create
// commands' driver data (queue buffers and doorbell records in memory
// they map, sized by libmlx5's rules; driver_mlx5_create.go), but
// refuseQueues keeps them unreached: the data path that would work the
// queues (posting, polling, UAR doorbells) waits for hardware to test it
// on.
type mlx5Provider struct {
	controlOnly
	st *mlx5State // set by open
}

// refuseQueues refuses, before anything is sent, the creation of a queue
// whose memory the driver takes from user space: mlx5 takes the CQ, QP
// and SRQ buffers and their doorbell records from user memory (struct
// mlx5_ib_create_cq and friends carry their addresses), and although the
// prepare hooks can allocate them, this package has no mlx5 data path to
// work them.
func (mlx5Provider) refuseQueues(what string) error {
	return fmt.Errorf("mlx5 %s: its buffer and doorbell record live in user memory, and rdmastack has no mlx5 data path to work them yet (it waits for hardware): %w", what, ErrNotSupported)
}

// ahMAC reads struct mlx5_ib_create_ah_resp, which mlx5 writes on RoCE
// ports only (response_length 0 otherwise).
func (mlx5Provider) ahMAC(out []byte) net.HardwareAddr {
	if len(out) < kabi.Sizeof[abi.Mlx5IbCreateAhResp]() {
		return nil
	}
	if r := kabi.Decode[abi.Mlx5IbCreateAhResp](out); r.ResponseLength >= 10 {
		return net.HardwareAddr(r.Dmac[:])
	}
	return nil
}

// mlx5Udata is the driver data of mlx5's control-path commands
// (GET_CONTEXT's request is built by mlx5GetContextAttempts).
func mlx5Udata() driverUdata {
	return driverUdata{
		allocPDOut:  kabi.Sizeof[abi.Mlx5IbAllocPdResp](),
		createAHOut: kabi.Sizeof[abi.Mlx5IbCreateAhResp](),
	}
}
