package nldev

import (
	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// PD is a protection domain as RDMA_NLDEV_CMD_RES_PD_GET reports it.
type PD struct {
	ResourceInfo
	PDN   uint32 // RDMA_NLDEV_ATTR_RES_PDN
	Users uint64 // RDMA_NLDEV_ATTR_RES_USECNT

	// The keys are sent only to callers with CAP_NET_ADMIN.
	LocalDMALKey     *uint32 // RDMA_NLDEV_ATTR_RES_LOCAL_DMA_LKEY
	UnsafeGlobalRKey *uint32 // RDMA_NLDEV_ATTR_RES_UNSAFE_GLOBAL_RKEY (PDs that have one)
	CTXN             *uint32 // RDMA_NLDEV_ATTR_RES_CTXN (user PDs)
}

var pdKind = resKind{
	name: "PD", plural: "PDs", cmd: nlabi.RDMA_NLDEV_CMD_RES_PD_GET,
	table: nlabi.RDMA_NLDEV_ATTR_RES_PD, entry: nlabi.RDMA_NLDEV_ATTR_RES_PD_ENTRY,
	id: nlabi.RDMA_NLDEV_ATTR_RES_PDN,
}

func (p *PD) required() []uint16 { return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_USECNT} }

func (p *PD) decodeAttr(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_RES_PDN:
		p.PDN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_USECNT:
		p.Users = ad.Uint64()
	case nlabi.RDMA_NLDEV_ATTR_RES_LOCAL_DMA_LKEY:
		p.LocalDMALKey = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_UNSAFE_GLOBAL_RKEY:
		p.UnsafeGlobalRKey = ptr(ad.Uint32())
	case nlabi.RDMA_NLDEV_ATTR_RES_CTXN:
		p.CTXN = ptr(ad.Uint32())
	}
}

// PDs returns the protection domains of device dev.
func (c *Client) PDs(dev uint32, opts ...ResourceOption) ([]PD, error) {
	return resDump[PD](c, &pdKind, false, dev, 0, opts)
}

// PD returns protection domain pdn of device dev.
func (c *Client) PD(dev, pdn uint32) (PD, error) {
	return resGet[PD](c, &pdKind, false, dev, 0, pdn)
}
