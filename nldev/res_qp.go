package nldev

import (
	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// QP is a queue pair as RDMA_NLDEV_CMD_RES_QP_GET reports it. Fields the
// kernel sends only for some QPs are pointers, nil when absent.
type QP struct {
	ResourceInfo
	Port  uint32    // RDMA_NLDEV_ATTR_PORT_INDEX; 0 before the QP is bound to a port
	LQPN  uint32    // RDMA_NLDEV_ATTR_RES_LQPN: the QP number
	Type  ib.QPType // RDMA_NLDEV_ATTR_RES_TYPE
	State ib.QPState

	RQPN         *uint32          // RDMA_NLDEV_ATTR_RES_RQPN: remote QP number (RC, UC)
	RQPSN        *uint32          // RDMA_NLDEV_ATTR_RES_RQ_PSN (RC, UC)
	SQPSN        uint32           // RDMA_NLDEV_ATTR_RES_SQ_PSN
	PathMigState *ib.PathMigState // RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE (RC, UC, XRC)
	PDN          *uint32          // RDMA_NLDEV_ATTR_RES_PDN (user QPs)
	Subtype      string           // RDMA_NLDEV_ATTR_RES_SUBTYPE: for driver QPs (6.10)
}

var qpKind = resKind{
	name: "QP", plural: "QPs",
	cmd: nlabi.RDMA_NLDEV_CMD_RES_QP_GET, rawCmd: nlabi.RDMA_NLDEV_CMD_RES_QP_GET_RAW,
	table: nlabi.RDMA_NLDEV_ATTR_RES_QP, entry: nlabi.RDMA_NLDEV_ATTR_RES_QP_ENTRY,
	id: nlabi.RDMA_NLDEV_ATTR_RES_LQPN, perPort: true, qpKey: true,
}

func (q *QP) required() []uint16 {
	return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_LQPN, nlabi.RDMA_NLDEV_ATTR_RES_SQ_PSN,
		nlabi.RDMA_NLDEV_ATTR_RES_TYPE, nlabi.RDMA_NLDEV_ATTR_RES_STATE}
}

func (q *QP) decodeAttr(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
		q.Port = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_LQPN:
		q.LQPN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_TYPE:
		q.Type = ib.QPType(ad.Uint8())
	case nlabi.RDMA_NLDEV_ATTR_RES_STATE:
		q.State = ib.QPState(ad.Uint8())
	case nlabi.RDMA_NLDEV_ATTR_RES_RQPN:
		q.RQPN = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_RQ_PSN:
		q.RQPSN = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_SQ_PSN:
		q.SQPSN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE:
		q.PathMigState = ptr(ib.PathMigState(ad.Uint8()))
	case nlabi.RDMA_NLDEV_ATTR_RES_PDN:
		q.PDN = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_SUBTYPE:
		q.Subtype = ad.String()
	}
}

func ptr[T any](v T) *T { return &v }

// QPs returns the queue pairs of device dev, in the kernel's order.
func (c *Client) QPs(dev uint32, opts ...ResourceOption) ([]QP, error) {
	return resDump[QP](c, &qpKind, false, dev, 0, opts)
}

// QPsOfPort returns the queue pairs bound to one port of device dev.
func (c *Client) QPsOfPort(dev, port uint32, opts ...ResourceOption) ([]QP, error) {
	if port == 0 {
		return nil, invalid("dump QPs of port 0", "ports are numbered from 1")
	}
	return resDump[QP](c, &qpKind, false, dev, port, opts)
}

// QP returns queue pair lqpn of port port of device dev. The kernel looks
// QPs up by port: a QP that is not bound to that port, or no QP of that
// number, gives an error matching os.ErrNotExist.
func (c *Client) QP(dev, port, lqpn uint32) (QP, error) {
	return resGet[QP](c, &qpKind, false, dev, port, lqpn)
}
