package pingpong

import (
	"fmt"
	"os"
	"time"

	"github.com/rdmastack/rdmastack/ah"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// init opens the device and creates what pp_init_ctx does.
func (p *pp) init(dev uverbs.Device) error {
	c := p.c
	bufLen := c.Size
	if c.Kind == UD {
		bufLen += grhLen
		p.sendOff = grhLen
	}
	var err error
	if p.buf, err = membuf.New(max(bufLen, 1)); err != nil {
		return fail("Couldn't allocate work buf.")
	}
	if c.Kind != SRQ { // srq_pingpong's buffer starts zeroed
		b := p.buf.Bytes()
		for i := range b {
			b[i] = 0x7b
		}
	}
	if p.ctx, err = uverbs.Open(dev); err != nil {
		return fail("Couldn't get context for %s", dev.Name)
	}
	if c.Kind == UD {
		port, err := p.ctx.QueryPort(c.IBPort)
		if err != nil {
			return fail("Unable to query port info for port %d", c.IBPort)
		}
		if mtu := port.ActiveMTU.Bytes(); c.Size > mtu {
			return fail("Requested size larger than port MTU (%d)", mtu)
		}
	}
	if c.Events {
		if p.ch, err = p.ctx.CreateCompChannel(); err != nil {
			return fail("Couldn't create completion channel")
		}
		p.ch.SetPollTime(pollTime())
	}
	if p.pd, err = p.ctx.AllocPD(); err != nil {
		return fail("Couldn't allocate PD")
	}
	if c.Kind == SRQ && c.ODP {
		attr, err := p.ctx.QueryDevice()
		if err != nil {
			return fail("Couldn't query device for its features")
		}
		const want = uverbs.ODPSupportSend | uverbs.ODPSupportSRQRecv
		if attr.ODP.General&uverbs.ODPSupport == 0 || attr.ODP.RC&want != want {
			return fail("The device isn't ODP capable or does not support RC send, receive and srq with ODP")
		}
		return fail("on-demand paging is not supported by this program")
	}
	if c.Kind == RC && (c.ODP || c.Timestamps || c.DM) {
		attr, err := p.ctx.QueryDevice()
		if err != nil {
			return fail("Couldn't query device for its features")
		}
		// rxe offers none of these on the kernels this runs on; a device
		// that does gets an error, as this program does not do them.
		switch {
		case c.ODP && (attr.ODP.General&uverbs.ODPSupport == 0 ||
			attr.ODP.RC&(uverbs.ODPSupportSend|uverbs.ODPSupportRecv) != uverbs.ODPSupportSend|uverbs.ODPSupportRecv):
			return fail("The device isn't ODP capable or does not support RC send and receive with ODP")
		case c.ImplicitOD && attr.ODP.General&uverbs.ODPSupportImplicit == 0:
			return fail("The device doesn't support implicit ODP")
		case c.Timestamps && attr.CompletionTimestampMask == 0:
			return fail("The device isn't completion timestamp capable")
		case c.DM && attr.MaxDMSize == 0:
			return fail("Device doesn't support dm allocation")
		default:
			return fail("on-demand paging, completion timestamps and device memory are not supported by this program")
		}
	}
	if p.mr, err = p.buf.Register(p.pd, uverbs.AccessLocalWrite); err != nil {
		return fail("Couldn't register MR")
	}
	if p.cq, err = p.ctx.CreateCQ(uverbs.CQAttr{CQE: c.RxDepth + c.NumQP, CompChannel: p.ch}); err != nil {
		return fail("Couldn't create CQ") // rdma-core's text, without the cause
	}
	init := uverbs.QPInit{Type: c.Kind.qpType(), SendCQ: p.cq, RecvCQ: p.cq,
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: uint32(c.RxDepth), MaxSendSGE: 1, MaxRecvSGE: 1}}
	if c.Kind == SRQ {
		if p.srq, err = p.pd.CreateSRQ(uverbs.SRQAttr{MaxWR: uint32(c.RxDepth), MaxSGE: 1}); err != nil {
			return fail("Couldn't create SRQ")
		}
		init.SRQ, init.Cap.MaxRecvWR, init.Cap.MaxRecvSGE = p.srq, 0, 0
	}
	p.flags = uverbs.SendSignaled
	p.qps = make([]*uverbs.QP, c.NumQP)
	for i := range p.qps {
		if p.qps[i], err = p.pd.CreateQP(init); err != nil {
			return fail("Couldn't create %s", p.qpName(i)) // rdma-core's text, without the cause
		}
		if p.qps[i].Cap().MaxInlineData >= uint32(c.Size) {
			p.flags |= uverbs.SendInline
		}
	}
	for i, qp := range p.qps {
		if err := qp.Init(uverbs.ConnectOptions{Port: uint8(c.IBPort), QKey: qkey}); err != nil {
			return fail("Failed to modify %s to INIT", p.qpName(i))
		}
	}
	if c.Kind == UD {
		if p.mirror, err = ah.NewMirror(p.ctx); err != nil {
			return fail("Couldn't read the GID table: %v", err)
		}
	}
	recvLen := c.Size
	if c.Kind == UD {
		recvLen += grhLen
	}
	p.recvSGE[0] = uverbs.SGE{Addr: p.buf.Addr(0), Length: uint32(recvLen), LKey: p.mr.LKey()}
	p.recvWR = uverbs.RecvWR{ID: recvWRID, SGE: p.recvSGE[:]}
	return nil
}

// pollTimeEnv is the hidden knob BenchmarkPingpong turns: the completion
// channel's poll time (uverbs.CompChannel.SetPollTime) as a Go duration.
// rdma-core's programs have no such flag, so the drop-ins take none.
const pollTimeEnv = "RDMASTACK_PINGPONG_POLLTIME"

// pollTime is the completion channel's poll time: none unless
// pollTimeEnv says otherwise.
func pollTime() time.Duration {
	d, err := time.ParseDuration(os.Getenv(pollTimeEnv))
	if err != nil {
		return 0
	}
	return d
}

// qpType is the kind's transport.
func (k Kind) qpType() ib.QPType {
	switch k {
	case UD:
		return ib.QPTypeUD
	case UC:
		return ib.QPTypeUC
	}
	return ib.QPTypeRC
}

// qpName names QP i in messages as the kind's program does: srq_pingpong
// numbers its QPs.
func (p *pp) qpName(i int) string {
	if p.c.Kind == SRQ {
		return fmt.Sprintf("QP[%d]", i)
	}
	return "QP"
}
