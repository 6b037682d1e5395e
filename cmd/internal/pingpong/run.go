package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/rdmastack/rdmastack/ah"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// Work request IDs, as rdma-core's programs use them.
const (
	recvWRID = 1
	sendWRID = 2
)

// grhLen is the room a UD receive leaves for the global route header.
const grhLen = 40

const qkey = 0x11111111

// Main is a whole program: it parses args for kind, runs, writes the
// output to stdout and returns an error whose text goes to stderr, or
// after the usage text a bare exit status 1 (cmnode.Exit ends main with
// either).
func Main(stdout io.Writer, prog string, kind Kind, args []string) error {
	c, err := Parse(kind, args)
	if err != nil {
		usage(stdout, prog, kind)
		if msg, _, ok := cutUsage(err); ok {
			return &ExitError{prog + ": " + msg}
		}
		return &cmnode.ExitError{Code: 1}
	}
	return Run(stdout, c)
}

func cutUsage(err error) (string, error, bool) {
	if errors.Is(err, errUsage) && err != errUsage {
		s := err.Error()
		return s[:len(s)-len(": usage")], errUsage, true
	}
	return "", nil, false
}

// pp is one side's resources.
type pp struct {
	c       *Config
	ctx     *uverbs.Context
	ch      *uverbs.CompChannel
	pd      *uverbs.PD
	buf     *membuf.Buffer
	mr      *membuf.MR
	cq      *uverbs.CQ
	qp      *uverbs.QP
	mirror  *ah.Mirror
	ah      *ah.AH
	flags   uverbs.SendFlags
	sendOff int // where sends start in buf (UD: after the GRH room)
	sendWR  uverbs.SendWR
	recvWR  uverbs.RecvWR
	sendSGE [1]uverbs.SGE
	recvSGE [1]uverbs.SGE
}

func (p *pp) close() {
	for _, c := range []interface{ Close() error }{p.ah, p.qp, p.cq, p.mr, p.pd, p.ch} {
		if c != nil && !isNil(c) {
			c.Close()
		}
	}
	if p.buf != nil {
		p.buf.Close()
	}
	if p.ctx != nil {
		p.ctx.Close()
	}
}

func isNil(c interface{ Close() error }) bool {
	switch v := c.(type) {
	case *ah.AH:
		return v == nil
	case *uverbs.QP:
		return v == nil
	case *uverbs.CQ:
		return v == nil
	case *membuf.MR:
		return v == nil
	case *uverbs.PD:
		return v == nil
	case *uverbs.CompChannel:
		return v == nil
	}
	return false
}

// Run runs one side of the pingpong.
func Run(stdout io.Writer, c *Config) error {
	if c.Kind == RC {
		if c.ODP && c.DM {
			return fail("DM memory region can't be on demand")
		}
		if !c.ODP && c.Prefetch {
			return fail("prefetch is valid only with on-demand memory region")
		}
	}
	snap, err := device.List()
	if err != nil {
		return fail("Failed to get IB devices list: %v", err)
	}
	devs := snap.Verbs()
	var dev *device.Device
	for i := range devs {
		if c.Dev == "" || devs[i].Name == c.Dev {
			dev = &devs[i]
			break
		}
	}
	if dev == nil {
		if c.Dev == "" {
			return fail("No IB devices found")
		}
		return fail("IB device %s not found", c.Dev)
	}
	p := &pp{c: c}
	defer p.close()
	if err := p.init(dev.Device); err != nil {
		return err
	}
	routs := p.postRecv(c.RxDepth)
	if routs < c.RxDepth {
		return fail("Couldn't post receive (%d)", routs)
	}
	if c.Events {
		if err := p.cq.RequestNotify(false); err != nil {
			return fail("Couldn't request CQ notification")
		}
	}
	port, err := p.ctx.QueryPort(c.IBPort)
	if err != nil {
		return fail("Couldn't get port info")
	}
	my := dest{lid: int(port.LID), qpn: int(p.qp.Num()), psn: rand.IntN(1 << 24)}
	if c.Kind == RC && port.LinkLayer != ib.LinkLayerEthernet && my.lid == 0 {
		return fail("Couldn't get local LID")
	}
	if c.GIDIndex >= 0 {
		g, err := p.ctx.QueryGID(c.IBPort, c.GIDIndex)
		if err != nil {
			if c.Kind == UD {
				return fail("Could not get local gid for gid index %d", c.GIDIndex)
			}
			return fail("can't read sgid of index %d", c.GIDIndex)
		}
		my.gid = g.GID
	}
	sep := ","
	if c.Kind == UD {
		sep = ":" // rdma-core's ud_pingpong prints a colon here
	}
	fmt.Fprintf(stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", my.lid, my.qpn, my.psn, sep, my.gid)

	var rem dest
	if c.Server != "" {
		rem, err = clientExchange(c.Server, c.Port, my)
	} else {
		rem, err = serverExchange(c.Port, my, func(d dest) error { return p.connect(my.psn, d) })
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", rem.lid, rem.qpn, rem.psn, rem.gid)
	if c.Server != "" {
		if err := p.connect(my.psn, rem); err != nil {
			return err
		}
	}
	p.prepareSend(rem)

	pending := recvWRID
	if c.Server != "" {
		if c.Validate {
			p.markPages()
		}
		if err := p.qp.PostSend(&p.sendWR); err != nil {
			return fail("Couldn't post send")
		}
		pending |= sendWRID
	}
	start := time.Now()
	rcnt, scnt, events := 0, 0, 0
	var wc [2]uverbs.WC
	for rcnt < c.Iters || scnt < c.Iters {
		if c.Events {
			if ev, err := p.ch.GetEvent(context.Background()); err != nil || ev != p.cq {
				return fail("Failed to get cq_event")
			}
			events++
			if err := p.cq.RequestNotify(false); err != nil {
				return fail("Couldn't request CQ notification")
			}
		}
		var ne int
		for {
			if ne, err = p.cq.Poll(wc[:]); err != nil {
				return fail("poll CQ failed %d", -1)
			}
			if c.Events || ne > 0 {
				break
			}
		}
		for i := 0; i < ne; i++ {
			w := &wc[i]
			if w.Status != uverbs.WCSuccess {
				msg := fmt.Sprintf("Failed status %s (%d) for wr_id %d", w.Status, w.Status, int(w.ID))
				if c.Kind == RC {
					msg += fmt.Sprintf("\nparse WC failed %d", ne)
				}
				return fail("%s", msg)
			}
			switch w.ID {
			case sendWRID:
				scnt++
			case recvWRID:
				if routs--; routs <= 1 {
					routs += p.postRecv(c.RxDepth - routs)
					if routs < c.RxDepth {
						return fail("Couldn't post receive (%d)", routs)
					}
				}
				rcnt++
			default:
				return fail("Completion for unknown wr_id %d", int(w.ID))
			}
			pending &^= int(w.ID)
			if scnt < c.Iters && pending == 0 {
				if err := p.qp.PostSend(&p.sendWR); err != nil {
					return fail("Couldn't post send")
				}
				pending = recvWRID | sendWRID
			}
		}
	}
	usec := float32(time.Since(start).Microseconds())
	bytes := int64(c.Size) * int64(c.Iters) * 2
	fmt.Fprintf(stdout, "%d bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec/1000000., float64(bytes)*8./float64(usec))
	fmt.Fprintf(stdout, "%d iters in %.2f seconds = %.2f usec/iter\n", c.Iters, usec/1000000., float64(usec)/float64(c.Iters))
	if c.Server == "" && c.Validate {
		p.checkPages(stdout)
	}
	p.cq.AckEvents(events)
	return nil
}

// postRecv posts up to n receives of the whole buffer and returns how
// many it posted.
func (p *pp) postRecv(n int) int {
	for i := 0; i < n; i++ {
		if p.qp.PostRecv(&p.recvWR) != nil {
			return i
		}
	}
	return n
}

// markPages and checkPages are rdma-core's -c: the first byte of every
// page of the message is i / page_size % sizeof(char), that is 0.
func (p *pp) markPages() {
	b := p.buf.Bytes()[p.sendOff:]
	for i := 0; i < p.c.Size; i += pageSize {
		b[i] = 0
	}
}

func (p *pp) checkPages(w io.Writer) {
	b := p.buf.Bytes()[p.sendOff:]
	for i := 0; i < p.c.Size; i += pageSize {
		if b[i] != 0 {
			fmt.Fprintf(w, "invalid data in page %d\n", i/pageSize)
		}
	}
}

var pageSize = 4096

// connect takes the QP to RTS towards d (UD: creates the AH).
func (p *pp) connect(myPSN int, d dest) error {
	c := p.c
	global := !isZero(d.gid[8:])
	o := uverbs.ConnectOptions{Port: uint8(c.IBPort), SGIDIndex: uint8(c.GIDIndex), PSN: uint32(myPSN), MTU: c.MTU, SL: uint8(c.SL)}
	peer := uverbs.Peer{QPN: uint32(d.qpn), PSN: uint32(d.psn), LID: uint16(d.lid)}
	if global {
		peer.GID = d.gid
	}
	if err := p.qp.ReadyToReceive(o, peer); err != nil {
		return fail("Failed to modify QP to RTR")
	}
	if err := p.qp.ReadyToSend(o); err != nil {
		return fail("Failed to modify QP to RTS")
	}
	if c.Kind != UD {
		return nil
	}
	var a ah.Attr
	a.Port, a.SL, a.IB.DLID = uint32(c.IBPort), uint8(c.SL), uint16(d.lid)
	if spec, ok := p.mirror.Port(a.Port); ok && spec.RoCE {
		a.Type = ah.TypeRoCE
	} else {
		a.Type = ah.TypeIB
	}
	if global {
		a.Flags = ah.FlagGRH
		a.GRH.DGID, a.GRH.SGIDIndex, a.GRH.HopLimit = d.gid, uint8(c.GIDIndex), 1
	}
	h, err := ah.CreateAH(p.pd, p.mirror.Table, &a)
	ah.Destroy(&a)
	if err != nil {
		return fail("Failed to create AH")
	}
	p.ah = h
	return nil
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// prepareSend fills the one send work request every iteration reposts.
func (p *pp) prepareSend(rem dest) {
	p.sendSGE[0] = uverbs.SGE{Addr: p.buf.Addr(p.sendOff), Length: uint32(p.c.Size), LKey: p.mr.LKey()}
	p.sendWR = uverbs.SendWR{ID: sendWRID, Opcode: uverbs.OpSend, Flags: p.flags, SGE: p.sendSGE[:]}
	if p.c.Kind == UD {
		p.sendWR.AH, p.sendWR.RemoteQPN, p.sendWR.RemoteQKey = p.ah.UVerbs(), uint32(rem.qpn), qkey
	}
}
