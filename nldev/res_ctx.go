package nldev

import (
	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Context is a user verbs context (an open uverbs device) as
// RDMA_NLDEV_CMD_RES_CTX_GET reports it.
type Context struct {
	ResourceInfo
	CTXN uint32 // RDMA_NLDEV_ATTR_RES_CTXN
}

var ctxKind = resKind{
	name: "context", plural: "contexts", cmd: nlabi.RDMA_NLDEV_CMD_RES_CTX_GET,
	table: nlabi.RDMA_NLDEV_ATTR_RES_CTX, entry: nlabi.RDMA_NLDEV_ATTR_RES_CTX_ENTRY,
	id: nlabi.RDMA_NLDEV_ATTR_RES_CTXN,
}

func (x *Context) required() []uint16 { return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_CTXN} }

func (x *Context) decodeAttr(ad *netlink.AttributeDecoder) {
	if ad.Type() == nlabi.RDMA_NLDEV_ATTR_RES_CTXN {
		x.CTXN = ad.Uint32()
	}
}

// Contexts returns the user contexts of device dev.
func (c *Client) Contexts(dev uint32, opts ...ResourceOption) ([]Context, error) {
	return resDump[Context](c, &ctxKind, false, dev, 0, opts)
}

// Context returns user context ctxn of device dev.
func (c *Client) Context(dev, ctxn uint32) (Context, error) {
	return resGet[Context](c, &ctxKind, false, dev, 0, ctxn)
}
