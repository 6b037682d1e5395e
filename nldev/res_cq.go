package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// CQ is a completion queue as RDMA_NLDEV_CMD_RES_CQ_GET reports it.
type CQ struct {
	ResourceInfo
	CQN   uint32 // RDMA_NLDEV_ATTR_RES_CQN
	CQE   uint32 // RDMA_NLDEV_ATTR_RES_CQE: the queue's size
	Users uint64 // RDMA_NLDEV_ATTR_RES_USECNT

	PollCtx            *PollCtx // RDMA_NLDEV_ATTR_RES_POLL_CTX (kernel CQs)
	AdaptiveModeration *bool    // RDMA_NLDEV_ATTR_DEV_DIM
	CTXN               *uint32  // RDMA_NLDEV_ATTR_RES_CTXN (user CQs)
}

// PollCtx is how a kernel CQ is polled (enum ib_poll_context in
// include/rdma/ib_verbs.h).
type PollCtx uint8

// Poll contexts.
const (
	PollDirect           PollCtx = 0 // IB_POLL_DIRECT
	PollSoftIRQ          PollCtx = 1 // IB_POLL_SOFTIRQ
	PollWorkqueue        PollCtx = 2 // IB_POLL_WORKQUEUE
	PollUnboundWorkqueue PollCtx = 3 // IB_POLL_UNBOUND_WORKQUEUE
)

var pollCtxNames = [...]string{"DIRECT", "SOFTIRQ", "WORKQUEUE", "UNBOUND_WORKQUEUE"}

// String returns iproute2's name, "UNKNOWN" for others.
func (p PollCtx) String() string {
	if int(p) < len(pollCtxNames) {
		return pollCtxNames[p]
	}
	return "UNKNOWN"
}

// GoString makes %#v print the number too.
func (p PollCtx) GoString() string { return fmt.Sprintf("nldev.PollCtx(%d)", uint8(p)) }

var cqKind = resKind{
	name: "CQ", plural: "CQs",
	cmd: nlabi.RDMA_NLDEV_CMD_RES_CQ_GET, rawCmd: nlabi.RDMA_NLDEV_CMD_RES_CQ_GET_RAW,
	table: nlabi.RDMA_NLDEV_ATTR_RES_CQ, entry: nlabi.RDMA_NLDEV_ATTR_RES_CQ_ENTRY,
	id: nlabi.RDMA_NLDEV_ATTR_RES_CQN,
}

func (q *CQ) required() []uint16 {
	return []uint16{nlabi.RDMA_NLDEV_ATTR_RES_CQE, nlabi.RDMA_NLDEV_ATTR_RES_USECNT}
}

func (q *CQ) decodeAttr(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_RES_CQN:
		q.CQN = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_CQE:
		q.CQE = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_USECNT:
		q.Users = ad.Uint64()
	case nlabi.RDMA_NLDEV_ATTR_RES_POLL_CTX:
		q.PollCtx = ptr(PollCtx(ad.Uint8()))
	case nlabi.RDMA_NLDEV_ATTR_DEV_DIM:
		q.AdaptiveModeration = ptr(ad.Uint8() != 0)
	case nlabi.RDMA_NLDEV_ATTR_RES_CTXN:
		q.CTXN = ptr(ad.Uint32())
	}
}

// CQs returns the completion queues of device dev.
func (c *Client) CQs(dev uint32, opts ...ResourceOption) ([]CQ, error) {
	return resDump[CQ](c, &cqKind, false, dev, 0, opts)
}

// CQ returns completion queue cqn of device dev; an unknown cqn gives an
// error matching os.ErrNotExist.
func (c *Client) CQ(dev, cqn uint32) (CQ, error) {
	return resGet[CQ](c, &cqKind, false, dev, 0, cqn)
}
