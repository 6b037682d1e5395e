package rsocket

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// rsResources are the verbs objects of one connection, made as
// rs_create_ep makes them: one CQ (with its completion channel) for both
// queues, an RC QP whose every send is signaled, a send buffer with room
// for the control messages and a message word after it, the target SGL array the peer
// writes its credit updates into, and the receive buffer.
type rsResources struct {
	pd   *uverbs.PD
	cc   *uverbs.CompChannel
	cq   *uverbs.CQ
	qp   *uverbs.QP
	sbuf *membuf.Buffer // sbufSize data bytes, then QPCtrlSize SGEs, then a message word (sbufLen)
	tbuf *membuf.Buffer // SGLSize SGEs, then iomapSize rs_iomaps, written by the peer
	rbuf *membuf.Buffer // written by the peer; in msgSend, the receives' message slots after rbufSize bytes
	smr  *membuf.MR
	tmr  *membuf.MR
	rmr  *membuf.MR

	sqSize, rqSize     int
	sbufSize, rbufSize int
	inline             int    // the most bytes a send carries inline (sq_inline)
	iomapSize          int    // entries of the target iomap array (set before setup)
	portMTU            ib.MTU // the port's active MTU, announced in the connection data
	mode               msgMode
	recvNext           int // msgSend: the slot of the next receive posted
}

// setup makes the resources of a connection on id, whose device is known
// (after address resolution, or on a connection request), of the sizes
// sz asks for, and posts the receive queue. On failure, close the id,
// then the resources.
func (r *rsResources) setup(id *rdma.ID, sz rsSizes) (err error) {
	const op = "create rsocket endpoint"
	defer func() {
		if err != nil {
			err = fmt.Errorf("rdma: %s: %w", op, err)
		}
	}()
	dev := id.Device()
	if dev == nil {
		return fmt.Errorf("the id has no device: %w", errInvalid)
	}
	ctx, err := dev.Context()
	if err != nil {
		return err
	}
	port, err := ctx.QueryPort(id.Port())
	if err != nil {
		return err
	}
	r.portMTU = port.ActiveMTU
	devMax := 0
	if attr, err := dev.Attr(); err == nil {
		devMax = int(attr.MaxQPWR)
	}
	sz.fitQueues(devMax)
	r.mode = modeOf(ctx.Device().Transport())
	if r.mode == msgSend {
		sz.inline = max(sz.inline, msgSize)
	}
	r.sqSize, r.rqSize = sz.sq, sz.rq
	r.sbufSize, r.rbufSize = sz.sbuf, sz.rbuf
	if r.pd, err = ctx.AllocPD(); err != nil {
		return err
	}
	if r.cc, err = ctx.CreateCompChannel(); err != nil {
		return err
	}
	if r.cq, err = ctx.CreateCQ(uverbs.CQAttr{CQE: r.sqSize + r.rqSize, CompChannel: r.cc}); err != nil {
		return err
	}
	if r.sbuf, err = membuf.New(r.sbufLen()); err != nil {
		return err
	}
	if r.tbuf, err = membuf.New(rsproto.SGESize*rsproto.SGLSize + rsproto.IOMapSize*r.iomapSize); err != nil {
		return err
	}
	if r.rbuf, err = membuf.New(r.rbufSize + r.mode.slots(r.rqSize)); err != nil {
		return err
	}
	if r.smr, err = r.sbuf.Register(r.pd, uverbs.AccessLocalWrite); err != nil {
		return err
	}
	const remote = uverbs.AccessLocalWrite | uverbs.AccessRemoteWrite
	if r.tmr, err = r.tbuf.Register(r.pd, remote); err != nil {
		return err
	}
	if r.rmr, err = r.rbuf.Register(r.pd, remote); err != nil {
		return err
	}
	r.qp, err = id.CreateQP(r.pd, uverbs.QPInit{SendCQ: r.cq, RecvCQ: r.cq, SQSigAll: true,
		Cap: uverbs.QPCap{MaxSendWR: uint32(r.sqSize), MaxRecvWR: uint32(r.rqSize), MaxSendSGE: 2, MaxRecvSGE: 1,
			MaxInlineData: uint32(sz.inline)}})
	if err != nil {
		return err
	}
	r.inline = r.qp.MaxInline() // what the QP took, which may be more (rs_create_ep reads it back)
	if r.mode == msgSend && r.inline < msgSize {
		return fmt.Errorf("the QP sends %d bytes inline, a message word needs %d: %w", r.inline, msgSize, unix.ENOTSUP)
	}
	for range r.rqSize {
		if err := r.postRecv(); err != nil {
			return err
		}
	}
	return nil
}

// close frees what setup made except the QP, which its id destroys:
// call it after the id is closed. The memory regions go before their
// buffers, the CQ before its channel, the PD last.
func (r *rsResources) close() error {
	var errs []error
	for _, mr := range []*membuf.MR{r.smr, r.tmr, r.rmr} {
		if mr != nil {
			errs = append(errs, mr.Close())
		}
	}
	for _, b := range []*membuf.Buffer{r.sbuf, r.tbuf, r.rbuf} {
		if b != nil {
			errs = append(errs, b.Close())
		}
	}
	if r.cq != nil {
		errs = append(errs, r.cq.Close())
	}
	if r.cc != nil {
		errs = append(errs, r.cc.Close())
	}
	if r.pd != nil {
		errs = append(errs, r.pd.Close())
	}
	*r = rsResources{}
	return errors.Join(errs...)
}
