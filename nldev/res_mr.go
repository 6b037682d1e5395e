package nldev

import (
	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// MR is a memory region as RDMA_NLDEV_CMD_RES_MR_GET reports it.
type MR struct {
	ResourceInfo
	MRN    uint32 // RDMA_NLDEV_ATTR_RES_MRN
	Length uint64 // RDMA_NLDEV_ATTR_RES_MRLEN

	// The keys are sent only to callers with CAP_NET_ADMIN.
	RKey *uint32 // RDMA_NLDEV_ATTR_RES_RKEY
	LKey *uint32 // RDMA_NLDEV_ATTR_RES_LKEY
	IOVA *uint64 // RDMA_NLDEV_ATTR_RES_IOVA (older kernels only)
	PDN  *uint32 // RDMA_NLDEV_ATTR_RES_PDN (user MRs)
}

var mrKind = resKind{
	name: "MR", plural: "MRs",
	cmd: nlabi.RDMA_NLDEV_CMD_RES_MR_GET, rawCmd: nlabi.RDMA_NLDEV_CMD_RES_MR_GET_RAW,
	table: nlabi.RDMA_NLDEV_ATTR_RES_MR, entry: nlabi.RDMA_NLDEV_ATTR_RES_MR_ENTRY,
	id: nlabi.RDMA_NLDEV_ATTR_RES_MRN,
}

func (m *MR) required() []uint16 { return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_MRLEN} }

func (m *MR) decodeAttr(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_RES_MRN:
		m.MRN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_MRLEN:
		m.Length = ad.Uint64()
	case nlabi.RDMA_NLDEV_ATTR_RES_RKEY:
		m.RKey = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_LKEY:
		m.LKey = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_IOVA:
		m.IOVA = ptr(ad.Uint64())
	case nlabi.RDMA_NLDEV_ATTR_RES_PDN:
		m.PDN = ptr(ad.Uint32())
	}
}

// MRs returns the memory regions of device dev.
func (c *Client) MRs(dev uint32, opts ...ResourceOption) ([]MR, error) {
	return resDump[MR](c, &mrKind, false, dev, 0, opts)
}

// MR returns memory region mrn of device dev.
func (c *Client) MR(dev, mrn uint32) (MR, error) {
	return resGet[MR](c, &mrKind, false, dev, 0, mrn)
}
