package uverbs

import "fmt"

// WCStatus is a completion's status (enum ib_wc_status, IBV_WC_*).
type WCStatus uint32

// Completion statuses.
const (
	WCSuccess        WCStatus = 0
	WCLocLenErr      WCStatus = 1
	WCLocQPOpErr     WCStatus = 2
	WCLocEECOpErr    WCStatus = 3
	WCLocProtErr     WCStatus = 4
	WCWRFlushErr     WCStatus = 5
	WCMWBindErr      WCStatus = 6
	WCBadRespErr     WCStatus = 7
	WCLocAccessErr   WCStatus = 8
	WCRemInvReqErr   WCStatus = 9
	WCRemAccessErr   WCStatus = 10
	WCRemOpErr       WCStatus = 11
	WCRetryExcErr    WCStatus = 12
	WCRNRRetryExcErr WCStatus = 13
	WCLocRDDViolErr  WCStatus = 14
	WCRemInvRDReqErr WCStatus = 15
	WCRemAbortErr    WCStatus = 16
	WCInvEECNErr     WCStatus = 17
	WCInvEECStateErr WCStatus = 18
	WCFatalErr       WCStatus = 19
	WCRespTimeoutErr WCStatus = 20
	WCGeneralErr     WCStatus = 21
)

// The texts of libibverbs' ibv_wc_status_str.
var statusNames = [...]string{"success", "local length error", "local QP operation error",
	"local EE context operation error", "local protection error", "Work Request Flushed Error",
	"memory management operation error", "bad response error", "local access error",
	"remote invalid request error", "remote access error", "remote operation error",
	"transport retry counter exceeded", "RNR retry counter exceeded", "local RDD violation error",
	"remote invalid RD request", "aborted error", "invalid EE context number",
	"invalid EE context state", "fatal error", "response timeout error", "general error"}

// String returns ibv_wc_status_str's text.
func (s WCStatus) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// WCOpcode is a completion's operation (enum ib_uverbs_wc_opcode).
type WCOpcode uint32

// Completion opcodes.
const (
	WCSend            WCOpcode = 0
	WCRDMAWrite       WCOpcode = 1
	WCRDMARead        WCOpcode = 2
	WCCompSwap        WCOpcode = 3
	WCFetchAdd        WCOpcode = 4
	WCBindMW          WCOpcode = 5
	WCLocalInv        WCOpcode = 6
	WCTSO             WCOpcode = 7
	WCRecv            WCOpcode = 128
	WCRecvRDMAWithImm WCOpcode = 129
)

// String returns libibverbs' name without IBV_WC_.
func (o WCOpcode) String() string {
	switch o {
	case WCRecv:
		return "RECV"
	case WCRecvRDMAWithImm:
		return "RECV_RDMA_WITH_IMM"
	}
	names := [...]string{"SEND", "RDMA_WRITE", "RDMA_READ", "COMP_SWAP", "FETCH_ADD", "BIND_MW", "LOCAL_INV", "TSO"}
	if int(o) < len(names) {
		return names[o]
	}
	return fmt.Sprintf("WCOpcode(%d)", uint32(o))
}

// WCFlags describe a completion (enum ib_wc_flags).
type WCFlags uint32

// Completion flags.
const (
	WCWithGRH WCFlags = 1 << 0 // IB_WC_GRH: a UD receive buffer starts with the 40-byte GRH
	WCWithImm WCFlags = 1 << 1 // IB_WC_WITH_IMM: Imm is valid
	WCWithInv WCFlags = 1 << 2 // IB_WC_WITH_INVALIDATE: the sender invalidated InvalidatedRKey
)

// WC is a work completion (struct ib_uverbs_wc).
type WC struct {
	ID        uint64
	Status    WCStatus
	Opcode    WCOpcode
	VendorErr uint32
	ByteLen   uint32
	Imm       uint32 // host order, valid with WCWithImm
	InvRKey   uint32 // the key a SEND_WITH_INV invalidated, valid with WCWithInv
	QPNum     uint32
	SrcQP     uint32
	Flags     WCFlags
	PKeyIndex uint16
	SLID      uint16
	SL        uint8
	DLIDPath  uint8
	Port      uint8
}
