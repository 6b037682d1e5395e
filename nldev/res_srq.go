package nldev

import (
	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// SRQ is a shared receive queue as RDMA_NLDEV_CMD_RES_SRQ_GET reports it.
type SRQ struct {
	ResourceInfo
	SRQN uint32     // RDMA_NLDEV_ATTR_RES_SRQN
	Type ib.SRQType // RDMA_NLDEV_ATTR_RES_TYPE
	PDN  uint32     // RDMA_NLDEV_ATTR_RES_PDN
	CQN  *uint32    // RDMA_NLDEV_ATTR_RES_CQN (XRC and tag-matching SRQs)

	// QPs are the numbers of the QPs that use the SRQ, as the kernel
	// sends them: single numbers and ascending ranges.
	QPs []QPNRange
}

// QPNRange is a range of QP numbers, First through Last; a single QP has
// First == Last.
type QPNRange struct{ First, Last uint32 }

var srqKind = resKind{
	name: "SRQ", plural: "SRQs",
	cmd: nlabi.RDMA_NLDEV_CMD_RES_SRQ_GET, rawCmd: nlabi.RDMA_NLDEV_CMD_RES_SRQ_GET_RAW, rawSince: "6.7",
	table: nlabi.RDMA_NLDEV_ATTR_RES_SRQ, entry: nlabi.RDMA_NLDEV_ATTR_RES_SRQ_ENTRY,
	id: nlabi.RDMA_NLDEV_ATTR_RES_SRQN,
}

func (s *SRQ) required() []uint16 {
	return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_SRQN, nlabi.RDMA_NLDEV_ATTR_RES_QP}
}

func (s *SRQ) decodeAttr(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_RES_SRQN:
		s.SRQN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_TYPE:
		s.Type = ib.SRQType(ad.Uint8())
	case nlabi.RDMA_NLDEV_ATTR_RES_PDN:
		s.PDN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_CQN:
		s.CQN = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_QP:
		ad.Nested(func(tad *netlink.AttributeDecoder) error {
			for tad.Next() {
				if tad.Type() != nlabi.RDMA_NLDEV_ATTR_RES_QP_ENTRY {
					continue
				}
				tad.Nested(func(ead *netlink.AttributeDecoder) error {
					var r QPNRange
					var one, lo, hi bool
					for ead.Next() {
						switch ead.Type() {
						case nlabi.RDMA_NLDEV_ATTR_RES_LQPN:
							r.First = ead.Uint32()
							r.Last, one = r.First, true
						case nlabi.RDMA_NLDEV_ATTR_MIN_RANGE:
							r.First, lo = ead.Uint32(), true
						case nlabi.RDMA_NLDEV_ATTR_MAX_RANGE:
							r.Last, hi = ead.Uint32(), true
						}
					}
					if one || (lo && hi) {
						s.QPs = append(s.QPs, r)
					}
					return nil
				})
			}
			return nil
		})
	}
}

// SRQs returns the shared receive queues of device dev.
func (c *Client) SRQs(dev uint32, opts ...ResourceOption) ([]SRQ, error) {
	return resDump[SRQ](c, &srqKind, false, dev, 0, opts)
}

// SRQ returns shared receive queue srqn of device dev.
func (c *Client) SRQ(dev, srqn uint32) (SRQ, error) {
	return resGet[SRQ](c, &srqKind, false, dev, 0, srqn)
}
