package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Port is one port of an RDMA device as RDMA_NLDEV_CMD_PORT_GET reports it.
type Port struct {
	DevIndex  uint32       // RDMA_NLDEV_ATTR_DEV_INDEX
	DevName   string       // RDMA_NLDEV_ATTR_DEV_NAME
	Index     uint32       // RDMA_NLDEV_ATTR_PORT_INDEX, from 1
	State     ib.PortState // RDMA_NLDEV_ATTR_PORT_STATE
	PhysState ib.PhysState // RDMA_NLDEV_ATTR_PORT_PHYS_STATE

	// IB holds the attributes only InfiniBand ports have; nil on RoCE and
	// iWARP ports.
	IB *IBPort

	// NetdevIndex and Netdev name the port's network device (RoCE, iWARP)
	// when it is in the caller's network namespace; Netdev is "" otherwise.
	NetdevIndex uint32 // RDMA_NLDEV_ATTR_NDEV_INDEX
	Netdev      string // RDMA_NLDEV_ATTR_NDEV_NAME
}

// IBPort is what an InfiniBand port reports beyond every port's fields.
type IBPort struct {
	Caps         PortCaps // RDMA_NLDEV_ATTR_CAP_FLAGS
	SubnetPrefix ib.GUID  // RDMA_NLDEV_ATTR_SUBNET_PREFIX (a GID prefix, printed like a GUID)
	LID          uint32   // RDMA_NLDEV_ATTR_LID
	SMLID        uint32   // RDMA_NLDEV_ATTR_SM_LID
	LMC          uint8    // RDMA_NLDEV_ATTR_LMC
}

// Ports returns every port of the device with index dev.
func (c *Client) Ports(dev uint32) ([]Port, error) {
	return dumpAll(c, request{op: fmt.Sprintf("dump ports of device %d", dev), cmd: nlabi.RDMA_NLDEV_CMD_PORT_GET,
		attrs: func(ae *netlink.AttributeEncoder) { ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev) }},
		fmt.Sprintf("no device with index %d", dev), decodePort)
}

// Port returns port number port (from 1) of the device with index dev. Port
// 0 is rejected before anything is sent; a device or port the kernel does
// not have gives an error matching os.ErrNotExist.
func (c *Client) Port(dev, port uint32) (Port, error) {
	op := fmt.Sprintf("get port %d of device %d", port, dev)
	if port == 0 {
		return Port{}, invalid(op, "ports are numbered from 1")
	}
	return getOne(c, portRequest(dev, port), "no such device or port", decodePort)
}

// decodePort parses the attributes of one PORT_GET reply.
func decodePort(b []byte) (Port, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return Port{}, err
	}
	var p Port
	var ibp IBPort
	var isIB, haveDev, havePort bool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			p.DevIndex = ad.Uint32()
			haveDev = true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			p.DevName = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
			p.Index = ad.Uint32()
			havePort = true
		case nlabi.RDMA_NLDEV_ATTR_PORT_STATE:
			p.State = ib.PortState(ad.Uint8())
		case nlabi.RDMA_NLDEV_ATTR_PORT_PHYS_STATE:
			p.PhysState = ib.PhysState(ad.Uint8())
		case nlabi.RDMA_NLDEV_ATTR_NDEV_INDEX:
			p.NetdevIndex = ad.Uint32()
		case nlabi.RDMA_NLDEV_ATTR_NDEV_NAME:
			p.Netdev = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_CAP_FLAGS:
			ibp.Caps, isIB = PortCaps(ad.Uint64()), true
		case nlabi.RDMA_NLDEV_ATTR_SUBNET_PREFIX:
			ibp.SubnetPrefix, isIB = ib.GUIDFromUint64(ad.Uint64()), true
		case nlabi.RDMA_NLDEV_ATTR_LID:
			ibp.LID, isIB = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_SM_LID:
			ibp.SMLID, isIB = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_LMC:
			ibp.LMC, isIB = ad.Uint8(), true
		}
	}
	if err := ad.Err(); err != nil {
		return Port{}, fmt.Errorf("decode port: %w", err)
	}
	if !haveDev || !havePort {
		return Port{}, fmt.Errorf("decode port: reply lacks the device or port index: %w", errProto)
	}
	if isIB {
		p.IB = &ibp
	}
	return p, nil
}
