package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
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
	srq     *uverbs.SRQ  // SRQ: the receive queue all QPs share
	qps     []*uverbs.QP // Config.NumQP of them
	pending []int        // per QP: the work requests it waits for
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
	if p.ah != nil {
		p.ah.Close()
	}
	for _, qp := range p.qps {
		if qp != nil {
			qp.Close()
		}
	}
	if p.srq != nil {
		p.srq.Close()
	}
	if p.cq != nil {
		p.cq.Close()
	}
	if p.mr != nil {
		p.mr.Close()
	}
	if p.pd != nil {
		p.pd.Close()
	}
	if p.ch != nil {
		p.ch.Close()
	}
	if p.buf != nil {
		p.buf.Close()
	}
	if p.ctx != nil {
		p.ctx.Close()
	}
}

// idleTimeout ends a run in which no completion comes for that long: a
// peer gone mid-run (or a lost UC message) leaves rdma-core's programs
// waiting for ever.
var idleTimeout = 10 * time.Second

// Run runs one side of the pingpong.
func Run(stdout io.Writer, c *Config) error {
	switch c.Kind {
	case RC:
		if c.ODP && c.DM {
			return fail("DM memory region can't be on demand")
		}
		if !c.ODP && c.Prefetch {
			return fail("prefetch is valid only with on-demand memory region")
		}
	case SRQ:
		// Both unsigned ints there, printed with %d.
		if uint32(c.NumQP) > uint32(c.RxDepth) {
			return fail("rx_depth %d is too small for %d QPs -- must have at least one receive per QP.", int32(c.RxDepth), int32(c.NumQP))
		}
		if c.NumQP >= maxQP {
			return fail("num_qp %d must be less than %d", int32(c.NumQP), maxQP-1)
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
	if c.Kind != UD && port.LinkLayer != ib.LinkLayerEthernet && port.LID == 0 {
		return fail("Couldn't get local LID")
	}
	var gid ib.GID
	if c.GIDIndex >= 0 {
		g, err := p.ctx.QueryGID(c.IBPort, c.GIDIndex)
		if err != nil {
			if c.Kind == UD || c.Kind == SRQ {
				return fail("Could not get local gid for gid index %d", c.GIDIndex)
			}
			return fail("can't read sgid of index %d", c.GIDIndex)
		}
		gid = g.GID
	}
	sep := ","
	if c.Kind == UD {
		sep = ":" // rdma-core's ud_pingpong prints a colon here
	}
	my := make([]dest, c.NumQP)
	for i, qp := range p.qps {
		my[i] = dest{lid: int(port.LID), qpn: int(qp.Num()), psn: rand.IntN(1 << 24), gid: gid}
		fmt.Fprintf(stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", my[i].lid, my[i].qpn, my[i].psn, sep, my[i].gid)
	}

	var rem []dest
	if c.Server != "" {
		rem, err = clientExchange(c.Kind, c.Server, c.Port, my)
	} else {
		rem, err = serverExchange(c.Kind, c.Port, my, func(d []dest) error { return p.connect(my, d) })
	}
	if err != nil {
		return err
	}
	for _, r := range rem[:c.NumQP] {
		fmt.Fprintf(stdout, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", r.lid, r.qpn, r.psn, r.gid)
	}
	if c.Server != "" {
		if err := p.connect(my, rem); err != nil {
			return err
		}
	}
	p.prepareSend(rem[0])

	p.pending = make([]int, c.NumQP)
	for q := range p.pending {
		p.pending[q] = recvWRID
	}
	if c.Server != "" {
		if c.Validate {
			p.markPages()
		}
		for q, qp := range p.qps {
			if err := qp.PostSend(&p.sendWR); err != nil {
				return fail("Couldn't post send")
			}
			p.pending[q] |= sendWRID
		}
	}
	wd := startWatchdog(idleTimeout)
	defer wd.stop()
	start := time.Now()
	rcnt, scnt, events := 0, 0, 0
	wc := make([]uverbs.WC, p.pollDepth())
	for rcnt < c.Iters || scnt < c.Iters {
		if c.Events {
			if ev, err := p.ch.GetEvent(wd.ctx); err != nil || ev != p.cq {
				return wd.fail("Failed to get cq_event")
			}
			events++
			if err := p.cq.RequestNotify(false); err != nil {
				return fail("Couldn't request CQ notification")
			}
		}
		var ne int
		for {
			if ne, err = p.cq.Poll(wc); err != nil {
				return fail("poll CQ failed %d", -1)
			}
			if c.Events || ne > 0 {
				break
			}
			if wd.fired.Load() {
				return wd.fail("")
			}
		}
		if ne > 0 {
			wd.progress.Add(1)
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
			q, err := p.qpIndex(w)
			if err != nil {
				return err
			}
			switch w.ID {
			case sendWRID:
				scnt++
			case recvWRID:
				// rdma-core's threshold is one receive per QP.
				if routs--; routs <= c.NumQP {
					routs += p.postRecv(c.RxDepth - routs)
					if routs < c.RxDepth {
						return fail("Couldn't post receive (%d)", routs)
					}
				}
				rcnt++
			default:
				return fail("Completion for unknown wr_id %d", int(w.ID))
			}
			p.pending[q] &^= int(w.ID)
			if scnt < c.Iters && p.pending[q] == 0 {
				if err := p.qps[q].PostSend(&p.sendWR); err != nil {
					return fail("Couldn't post send")
				}
				p.pending[q] = recvWRID | sendWRID
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

// pollDepth is how many completions one poll takes: rdma-core's
// programs poll 2, srq_pingpong a receive queue's and every QP's send.
func (p *pp) pollDepth() int {
	if p.c.Kind == SRQ {
		return p.c.NumQP + p.c.RxDepth
	}
	return 2
}

// qpIndex is the index of the QP a completion is for: srq_pingpong looks
// its number up, the others have one QP.
func (p *pp) qpIndex(w *uverbs.WC) (int, error) {
	if p.c.Kind != SRQ {
		return 0, nil
	}
	for q, qp := range p.qps {
		if qp.Num() == w.QPNum {
			return q, nil
		}
	}
	return 0, fail("Couldn't find QPN %06x", w.QPNum)
}

// watchdog notices a run that makes no progress for its idle time: it
// cancels ctx (ending a wait for an event) and sets fired (which a busy
// poll checks). The loop counts progress; stop ends the watch.
type watchdog struct {
	ctx      context.Context
	cancel   context.CancelFunc
	idle     time.Duration
	progress atomic.Uint64
	fired    atomic.Bool
	done     chan struct{}
}

func startWatchdog(idle time.Duration) *watchdog {
	w := &watchdog{idle: idle, done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.watch()
	return w
}

func (w *watchdog) watch() {
	defer close(w.done)
	t := time.NewTimer(w.idle)
	defer t.Stop()
	var last uint64
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
		if n := w.progress.Load(); n != last {
			last = n
			t.Reset(w.idle)
			continue
		}
		w.fired.Store(true)
		w.cancel()
		return
	}
}

func (w *watchdog) stop() {
	w.cancel()
	<-w.done
}

// fail is the run's error once the watchdog fired, else msg's.
func (w *watchdog) fail(msg string) error {
	if w.fired.Load() {
		return fail("No completion for %v: the peer is gone or a message was lost", w.idle)
	}
	return fail("%s", msg)
}

// postRecv posts up to n receives of the whole buffer and returns how
// many it posted.
func (p *pp) postRecv(n int) int {
	for i := 0; i < n; i++ {
		var err error
		if p.srq != nil {
			err = p.srq.PostRecv(&p.recvWR)
		} else {
			err = p.qps[0].PostRecv(&p.recvWR)
		}
		if err != nil {
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

// connect takes the QPs to RTS towards the peer's (UD: creates the AH).
// All take the route of the peer's first record, as srq_pingpong's do.
func (p *pp) connect(my, rem []dest) error {
	c := p.c
	d := rem[0]
	global := !isZero(d.gid[8:])
	for i, qp := range p.qps {
		o := uverbs.ConnectOptions{Port: uint8(c.IBPort), SGIDIndex: uint8(c.GIDIndex), PSN: uint32(my[i].psn), MTU: c.MTU, SL: uint8(c.SL)}
		peer := uverbs.Peer{QPN: uint32(rem[i].qpn), PSN: uint32(rem[i].psn), LID: uint16(rem[i].lid)}
		if global {
			peer.GID = d.gid
		}
		if err := qp.ReadyToReceive(o, peer); err != nil {
			return fail("Failed to modify %s to RTR", p.qpName(i))
		}
		if err := qp.ReadyToSend(o); err != nil {
			return fail("Failed to modify %s to RTS", p.qpName(i))
		}
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
