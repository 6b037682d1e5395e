package ib

import "fmt"

// QPType is a queue pair's transport type (enum ib_qp_type in the kernel's
// include/rdma/ib_verbs.h; IBV_QPT_* in verbs). RDMA netlink reports it in
// RDMA_NLDEV_ATTR_RES_TYPE.
type QPType uint8

// QP types.
const (
	QPTypeSMI          QPType = 0    // IB_QPT_SMI: QP0
	QPTypeGSI          QPType = 1    // IB_QPT_GSI: QP1
	QPTypeRC           QPType = 2    // IB_QPT_RC: reliable connected
	QPTypeUC           QPType = 3    // IB_QPT_UC: unreliable connected
	QPTypeUD           QPType = 4    // IB_QPT_UD: unreliable datagram
	QPTypeRawIPv6      QPType = 5    // IB_QPT_RAW_IPV6
	QPTypeRawEthertype QPType = 6    // IB_QPT_RAW_ETHERTYPE
	QPTypeRawPacket    QPType = 8    // IB_QPT_RAW_PACKET
	QPTypeXRCIni       QPType = 9    // IB_QPT_XRC_INI
	QPTypeXRCTgt       QPType = 10   // IB_QPT_XRC_TGT
	QPTypeDriver       QPType = 0xFF // IB_QPT_DRIVER: a driver-specific QP (see the QP's subtype)
)

var qpTypeNames = [...]string{"SMI", "GSI", "RC", "UC", "UD", "RAW_IPV6", "RAW_ETHERTYPE", "UNKNOWN",
	"RAW_PACKET", "XRC_INI", "XRC_TGT"}

// String returns iproute2's name for the type ("RC", "UD", ...), and
// "UNKNOWN" for values it does not know, as iproute2 does.
func (t QPType) String() string {
	if int(t) < len(qpTypeNames) {
		return qpTypeNames[t]
	}
	if t == QPTypeDriver {
		return "DRIVER"
	}
	return "UNKNOWN"
}

// GoString makes %#v print the number too.
func (t QPType) GoString() string { return fmt.Sprintf("ib.QPType(%d)", uint8(t)) }

// QPState is a queue pair's state (enum ib_qp_state in ib_verbs.h).
type QPState uint8

// QP states.
const (
	QPStateReset QPState = 0 // IB_QPS_RESET
	QPStateInit  QPState = 1 // IB_QPS_INIT
	QPStateRTR   QPState = 2 // IB_QPS_RTR: ready to receive
	QPStateRTS   QPState = 3 // IB_QPS_RTS: ready to send
	QPStateSQD   QPState = 4 // IB_QPS_SQD: send queue drained
	QPStateSQE   QPState = 5 // IB_QPS_SQE: send queue error
	QPStateErr   QPState = 6 // IB_QPS_ERR
)

var qpStateNames = [...]string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}

// String returns iproute2's name for the state, "UNKNOWN" for others.
func (s QPState) String() string {
	if int(s) < len(qpStateNames) {
		return qpStateNames[s]
	}
	return "UNKNOWN"
}

// GoString makes %#v print the number too.
func (s QPState) GoString() string { return fmt.Sprintf("ib.QPState(%d)", uint8(s)) }

// PathMigState is a connected QP's path-migration state (enum ib_mig_state
// in ib_verbs.h).
type PathMigState uint8

// Path migration states.
const (
	MigMigrated PathMigState = 0 // IB_MIG_MIGRATED
	MigRearm    PathMigState = 1 // IB_MIG_REARM
	MigArmed    PathMigState = 2 // IB_MIG_ARMED
)

var pathMigNames = [...]string{"MIGRATED", "REARM", "ARMED"}

// String returns iproute2's name for the state, "UNKNOWN" for others.
func (s PathMigState) String() string {
	if int(s) < len(pathMigNames) {
		return pathMigNames[s]
	}
	return "UNKNOWN"
}

// GoString makes %#v print the number too.
func (s PathMigState) GoString() string { return fmt.Sprintf("ib.PathMigState(%d)", uint8(s)) }

// SRQType is a shared receive queue's type (enum ib_srq_type in
// ib_verbs.h).
type SRQType uint8

// SRQ types.
const (
	SRQTypeBasic SRQType = 0 // IB_SRQT_BASIC
	SRQTypeXRC   SRQType = 1 // IB_SRQT_XRC
	SRQTypeTM    SRQType = 2 // IB_SRQT_TM: tag matching
)

var srqTypeNames = [...]string{"BASIC", "XRC", "TM"}

// String returns iproute2's name for the type, "UNKNOWN" for others.
func (t SRQType) String() string {
	if int(t) < len(srqTypeNames) {
		return srqTypeNames[t]
	}
	return "UNKNOWN"
}

// GoString makes %#v print the number too.
func (t SRQType) GoString() string { return fmt.Sprintf("ib.SRQType(%d)", uint8(t)) }
