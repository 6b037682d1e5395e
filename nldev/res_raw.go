package nldev

import (
	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// RawResource is one object in its driver's own binary format
// (RDMA_NLDEV_ATTR_RES_RAW), as the *_GET_RAW commands return it. They need
// CAP_NET_ADMIN; drivers without a raw format (rxe, siw) make them fail
// with an error matching ErrNotSupported.
type RawResource struct {
	ResourceInfo
	Port uint32 // RDMA_NLDEV_ATTR_PORT_INDEX, when the driver sends it (QPs)
	Data []byte // RDMA_NLDEV_ATTR_RES_RAW
}

func (r *RawResource) required() []uint16 { return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_RAW} }

func (r *RawResource) decodeAttr(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
		r.Port = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_RAW:
		r.Data = ad.Bytes()
	}
}

// RawQPs returns the queue pairs of device dev in the driver's format.
func (c *Client) RawQPs(dev uint32, opts ...ResourceOption) ([]RawResource, error) {
	return resDump[RawResource](c, &qpKind, true, dev, 0, opts)
}

// RawQPsOfPort returns the queue pairs of one port of dev in the driver's
// format.
func (c *Client) RawQPsOfPort(dev, port uint32, opts ...ResourceOption) ([]RawResource, error) {
	if port == 0 {
		return nil, invalid("dump raw QPs of port 0", "ports are numbered from 1")
	}
	return resDump[RawResource](c, &qpKind, true, dev, port, opts)
}

// RawQP returns queue pair lqpn of port port of dev in the driver's format.
func (c *Client) RawQP(dev, port, lqpn uint32) (RawResource, error) {
	return resGet[RawResource](c, &qpKind, true, dev, port, lqpn)
}

// RawCQs returns the completion queues of dev in the driver's format.
func (c *Client) RawCQs(dev uint32, opts ...ResourceOption) ([]RawResource, error) {
	return resDump[RawResource](c, &cqKind, true, dev, 0, opts)
}

// RawCQ returns completion queue cqn of dev in the driver's format.
func (c *Client) RawCQ(dev, cqn uint32) (RawResource, error) {
	return resGet[RawResource](c, &cqKind, true, dev, 0, cqn)
}

// RawMRs returns the memory regions of dev in the driver's format.
func (c *Client) RawMRs(dev uint32, opts ...ResourceOption) ([]RawResource, error) {
	return resDump[RawResource](c, &mrKind, true, dev, 0, opts)
}

// RawMR returns memory region mrn of dev in the driver's format.
func (c *Client) RawMR(dev, mrn uint32) (RawResource, error) {
	return resGet[RawResource](c, &mrKind, true, dev, 0, mrn)
}

// RawSRQs returns the shared receive queues of dev in the driver's format
// (Linux 6.7; older kernels give an error matching ErrNotSupported).
func (c *Client) RawSRQs(dev uint32, opts ...ResourceOption) ([]RawResource, error) {
	return resDump[RawResource](c, &srqKind, true, dev, 0, opts)
}

// RawSRQ returns shared receive queue srqn of dev in the driver's format
// (Linux 6.7).
func (c *Client) RawSRQ(dev, srqn uint32) (RawResource, error) {
	return resGet[RawResource](c, &srqKind, true, dev, 0, srqn)
}
