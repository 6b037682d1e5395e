package nldev

import (
	"fmt"
	"net/netip"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// CMID is an RDMA connection manager id (struct rdma_cm_id) as
// RDMA_NLDEV_CMD_RES_CM_ID_GET reports it.
type CMID struct {
	ResourceInfo
	Port      uint32    // RDMA_NLDEV_ATTR_PORT_INDEX; 0 when not bound to a port
	ID        uint32    // RDMA_NLDEV_ATTR_RES_CM_IDN
	PortSpace PortSpace // RDMA_NLDEV_ATTR_RES_PS
	State     CMState   // RDMA_NLDEV_ATTR_RES_STATE

	// QP is the cm_id's queue pair, nil when it has none.
	QP *CMIDQP

	// SrcAddr and DstAddr are the bound and the peer address
	// (RDMA_NLDEV_ATTR_RES_SRC_ADDR, DST_ADDR). The families are 0 when the
	// kernel did not send the address; the AddrPort is invalid for
	// families other than AF_INET and AF_INET6.
	SrcFamily, DstFamily uint16
	SrcAddr, DstAddr     netip.AddrPort
}

// CMIDQP is the queue pair a cm_id drives.
type CMIDQP struct {
	LQPN uint32    // RDMA_NLDEV_ATTR_RES_LQPN
	Type ib.QPType // RDMA_NLDEV_ATTR_RES_TYPE
}

// PortSpace is a cm_id's port space (enum rdma_ucm_port_space in
// rdma_user_cm.h).
type PortSpace uint32

// Port spaces.
const (
	PortSpaceIPoIB PortSpace = nlabi.RDMA_PS_IPOIB
	PortSpaceIB    PortSpace = nlabi.RDMA_PS_IB
	PortSpaceTCP   PortSpace = nlabi.RDMA_PS_TCP
	PortSpaceUDP   PortSpace = nlabi.RDMA_PS_UDP
)

// String returns iproute2's name: "TCP", "UDP", "IPoIB" (iproute2 also
// prints RDMA_PS_IB as "IPoIB"), and "---" for others.
func (ps PortSpace) String() string {
	switch ps {
	case PortSpaceIPoIB, PortSpaceIB:
		return "IPoIB"
	case PortSpaceTCP:
		return "TCP"
	case PortSpaceUDP:
		return "UDP"
	}
	return "---"
}

// GoString makes %#v print the number too.
func (ps PortSpace) GoString() string { return fmt.Sprintf("nldev.PortSpace(%#x)", uint32(ps)) }

// CMState is a cm_id's state (enum rdma_cm_state in the kernel's
// drivers/infiniband/core/cma_priv.h).
type CMState uint8

// CM states.
const (
	CMIdle CMState = iota
	CMAddrQuery
	CMAddrResolved
	CMRouteQuery
	CMRouteResolved
	CMConnect
	CMDisconnect
	CMAddrBound
	CMListen
	CMDeviceRemoval
	CMDestroying
)

var cmStateNames = [...]string{"IDLE", "ADDR_QUERY", "ADDR_RESOLVED", "ROUTE_QUERY", "ROUTE_RESOLVED",
	"CONNECT", "DISCONNECT", "ADDR_BOUND", "LISTEN", "DEVICE_REMOVAL", "DESTROYING"}

// String returns iproute2's name for the state, "UNKNOWN" for others.
func (s CMState) String() string {
	if int(s) < len(cmStateNames) {
		return cmStateNames[s]
	}
	return "UNKNOWN"
}

// GoString makes %#v print the number too.
func (s CMState) GoString() string { return fmt.Sprintf("nldev.CMState(%d)", uint8(s)) }

var cmidKind = resKind{
	name: "cm_id", plural: "cm_ids", cmd: nlabi.RDMA_NLDEV_CMD_RES_CM_ID_GET,
	table: nlabi.RDMA_NLDEV_ATTR_RES_CM_ID, entry: nlabi.RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY,
	id: nlabi.RDMA_NLDEV_ATTR_RES_CM_IDN, perPort: true,
}

func (m *CMID) required() []uint16 {
	return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_STATE, nlabi.RDMA_NLDEV_ATTR_RES_PS}
}

func (m *CMID) decodeAttr(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
		m.Port = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_CM_IDN:
		m.ID = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_PS:
		m.PortSpace = PortSpace(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_STATE:
		m.State = CMState(ad.Uint8())
	case nlabi.RDMA_NLDEV_ATTR_RES_LQPN:
		m.qp().LQPN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_TYPE:
		m.qp().Type = ib.QPType(ad.Uint8())
	case nlabi.RDMA_NLDEV_ATTR_RES_SRC_ADDR:
		m.SrcFamily, m.SrcAddr = decodeSockaddr(ad.Bytes())
	case nlabi.RDMA_NLDEV_ATTR_RES_DST_ADDR:
		m.DstFamily, m.DstAddr = decodeSockaddr(ad.Bytes())
	}
}

func (m *CMID) qp() *CMIDQP {
	if m.QP == nil {
		m.QP = &CMIDQP{}
	}
	return m.QP
}

// CMIDs returns the connection manager ids of device dev.
func (c *Client) CMIDs(dev uint32, opts ...ResourceOption) ([]CMID, error) {
	return resDump[CMID](c, &cmidKind, false, dev, 0, opts)
}

// CMIDsOfPort returns the connection manager ids bound to one port of dev.
func (c *Client) CMIDsOfPort(dev, port uint32, opts ...ResourceOption) ([]CMID, error) {
	if port == 0 {
		return nil, invalid("dump cm_ids of port 0", "ports are numbered from 1")
	}
	return resDump[CMID](c, &cmidKind, false, dev, port, opts)
}

// CMID returns cm_id id of port port of device dev; like QPs, cm_ids are
// looked up by port.
func (c *Client) CMID(dev, port, id uint32) (CMID, error) {
	return resGet[CMID](c, &cmidKind, false, dev, port, id)
}
