package uverbs

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// CompChannel is a completion channel: an fd on which CQs bound to it
// report completion events.
type CompChannel struct {
	waits   atomic.Uint32 // GetEvent waits, for checking the clock every clockEvery
	yielded atomic.Int64  // when a GetEvent last yielded (since epoch)
	ctx     *Context
	fd      int
	f       *os.File
	once    sync.Once
	err     error
}

// CreateCompChannel creates a completion channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	var req abi.CreateCompChannel
	var resp abi.CreateCompChannelResp
	if err := c.write("create comp channel", &abi.WriteCmd{Command: abi.IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
		Req: abi.Bytes(&req), Resp: abi.Bytes(&resp)}); err != nil {
		return nil, err
	}
	fd := int(int32(resp.FD))
	f, err := eventFile(fd, c.dev.Name)
	if err != nil {
		return nil, wrap(c.dev.Name, "create comp channel", err)
	}
	return &CompChannel{ctx: c, fd: fd, f: f}, nil
}

// FD is the channel's file descriptor (non-blocking; valid until Close).
func (ch *CompChannel) FD() int { return ch.fd }

// Close closes the channel's fd. The kernel keeps the channel until the
// CQs bound to it are destroyed. Safe to call more than once.
func (ch *CompChannel) Close() error {
	ch.once.Do(func() { ch.err = wrap(ch.ctx.dev.Name, "close comp channel", ch.f.Close()) })
	return ch.err
}

// CQ is a completion queue.
type CQ struct {
	object
	userHandle uint64
	cqe        int
	driver     []byte
}

// CQAttr is what CreateCQ needs.
type CQAttr struct {
	CQE         int          // at least this many entries
	CompVector  int          // completion vector, below NumCompVectors
	CompChannel *CompChannel // nil for none
}

// CreateCQ creates a completion queue. For rxe and siw the driver's
// response (the queue's mmap cookie) is kept; the data path that would map
// it is not part of this package.
func (c *Context) CreateCQ(attr CQAttr) (*CQ, error) {
	const op = "create cq"
	if attr.CQE < 1 || attr.CQE > 1<<31-1 || attr.CompVector < 0 {
		return nil, invalid(c.dev.Name, op, "cqe %d or comp vector %d out of range", attr.CQE, attr.CompVector)
	}
	if err := c.needsProviderBuffers(op, "CQ"); err != nil {
		return nil, err
	}
	cq := &CQ{object: object{ctx: c}}
	cq.userHandle = c.register(cq)
	req := abi.CreateCq{UserHandle: cq.userHandle, Cqe: uint32(attr.CQE), CompVector: uint32(attr.CompVector), CompChannel: -1}
	if attr.CompChannel != nil {
		req.CompChannel = int32(attr.CompChannel.FD())
	}
	var resp abi.CreateCqResp
	cq.driver = make([]byte, driverData(c.dev.DriverID).createCQOut)
	if err := c.write(op, &abi.WriteCmd{Command: abi.IB_USER_VERBS_CMD_CREATE_CQ,
		Req: abi.Bytes(&req), Resp: abi.Bytes(&resp), DriverOut: cq.driver}); err != nil {
		c.unregister(cq.userHandle)
		return nil, err
	}
	cq.handle, cq.cqe = resp.CqHandle, int(resp.Cqe)
	return cq, nil
}

// CQE is the number of entries the kernel gave the queue.
func (cq *CQ) CQE() int { return cq.cqe }

// Close destroys the completion queue. Safe to call more than once.
func (cq *CQ) Close() error {
	return cq.destroy(func() error {
		req := abi.DestroyCq{CqHandle: cq.handle}
		var resp abi.DestroyCqResp
		err := cq.ctx.write(fmt.Sprintf("destroy cq %d", cq.handle), &abi.WriteCmd{Command: abi.IB_USER_VERBS_CMD_DESTROY_CQ,
			Req: abi.Bytes(&req), Resp: abi.Bytes(&resp)})
		if err == nil {
			cq.ctx.unregister(cq.userHandle)
		}
		return err
	})
}
