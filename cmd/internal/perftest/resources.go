package perftest

import (
	"io"
	"net/netip"
	"os"
	"strconv"

	"github.com/rdmastack/rdmastack/ah"
	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// res is one side's verbs resources (perftest's pingpong_context).
type res struct {
	c      *Config
	ctx    *uverbs.Context // ours: the device's and port's facts
	vctx   *uverbs.Context // where the test's objects live: ctx, or with -R the rdma_cm id's device's
	ids    []*rdma.ID      // with -R, the test QPs' ids (each owns its QP)
	port   *uverbs.PortAttr
	ch     *uverbs.CompChannel
	pd     *uverbs.PD
	buf    *membuf.Buffer
	mr     *membuf.MR
	sendCQ *uverbs.CQ
	recvCQ *uverbs.CQ // the send CQ's twin for SEND tests, else nil
	qps    []*uverbs.QP
	ahs    []*ah.AH
	mirror *ah.Mirror
	cred   *credits // iWARP's send credits (ib_send_bw), else nil

	cycleBuffer int
	cacheLine   int
	slot        int // one QP's share of either half of buf
	mtu         ib.MTU
	withGID     bool
}

func (r *res) close() {
	for _, h := range r.ahs {
		if h != nil {
			h.Close()
		}
	}
	for _, id := range r.ids {
		id.Disconnect()
		id.Close()
	}
	if r.ids == nil {
		for _, q := range r.qps {
			if q != nil {
				q.Close()
			}
		}
	}
	if r.sendCQ != nil {
		r.sendCQ.Close()
	}
	if r.recvCQ != nil {
		r.recvCQ.Close()
	}
	if r.mr != nil {
		r.mr.Close()
	}
	if r.cred != nil {
		r.cred.close()
	}
	if r.pd != nil {
		r.pd.Close()
	}
	if r.ch != nil {
		r.ch.Close()
	}
	if r.buf != nil {
		r.buf.Close()
	}
	if r.ctx != nil {
		r.ctx.Close() // r.vctx, when another, is the rdma package's
	}
}

// openDevice is ctx_find_dev and ctx_open_device, with check_link's
// link facts.
func openDevice(c *Config, stdout, stderr io.Writer) (*res, error) {
	snap, err := device.List()
	if err != nil {
		return nil, noDevice(c, " Did not detect devices \n If device exists, check if driver is up\n")
	}
	devs := snap.Verbs()
	if len(devs) == 0 {
		return nil, noDevice(c, " Did not detect devices \n If device exists, check if driver is up\n")
	}
	var dev *device.Device
	for i := range devs {
		if c.Dev == "" || devs[i].Name == c.Dev {
			dev = &devs[i]
			break
		}
	}
	if dev == nil {
		return nil, noDevice(c, "IB device "+c.Dev+" not found\n")
	}
	c.Dev = dev.Name
	r := &res{c: c, cycleBuffer: os.Getpagesize(), cacheLine: defCacheLine}
	if r.ctx, err = uverbs.Open(dev.Device); err != nil {
		return nil, fail(" Couldn't get context for the device\n")
	}
	if r.port, err = r.ctx.QueryPort(c.IBPort); err != nil || r.port.State != ib.PortActive {
		r.close()
		return nil, fail(" Port number " + itoa(c.IBPort) + " state is " + portState(r.port) + "\n Couldn't set the link layer\n Couldn't get context for the device\n")
	}
	if r.port.LinkLayer == ib.LinkLayerEthernet && c.GIDIndex == -1 {
		c.GIDIndex = 0
	}
	// rxe is not among the devices perftest knows to do inline sends.
	if c.Inline != -1 {
		io.WriteString(stdout, resultLine)
		io.WriteString(stderr, "Device not recognized to implement inline feature. Disabling it\n")
	}
	c.Inline = 0
	if c.Verb == Read {
		attr, err := r.ctx.QueryDevice()
		if err != nil {
			r.close()
			return nil, fail(" Couldn't get context for the device\n")
		}
		maxReads := int(attr.MaxQPRdAtom)
		if c.OutReads > maxReads {
			io.WriteString(stdout, resultLine)
			io.WriteString(stderr, " Number of outstanding reads is above max = "+itoa(maxReads)+"\n Changing to that max value\n")
			c.OutReads = maxReads
		} else if c.OutReads <= 0 {
			c.OutReads = maxReads
		}
	} else {
		c.OutReads = 1
	}
	return r, nil
}

func portState(p *uverbs.PortAttr) string {
	if p == nil {
		return "unknown"
	}
	return p.State.String()
}

func (r *res) linkInfo() linkInfo {
	ll := "IB"
	if r.port.LinkLayer == ib.LinkLayerEthernet {
		ll = "Ethernet"
	}
	tr := "IB" // perftest's transport_str
	if r.vctx.Device().Transport() == uverbs.TransportIWARP {
		tr = "IW"
	}
	return linkInfo{dev: r.c.Dev, transport: tr, linkLayer: ll, mtu: r.mtu.Bytes()}
}

// pickMTU is set_mtu: the port's active MTU, or the user's when it is
// valid and not above it. Its notes go to stdout and stderr as perftest
// prints them.
func (r *res) pickMTU(out, errw func(string)) ib.MTU {
	active := r.port.ActiveMTU
	if r.c.MTU == 0 {
		return active
	}
	m, ok := ib.MTUFromBytes(r.c.MTU)
	if !ok {
		errw(" Invalid MTU - " + itoa(r.c.MTU) + " \n Please choose mtu from {256,512,1024,2048,4096}\n Will run with the port active mtu - " + itoa(int(active)) + "\n")
		return active
	}
	if m > active {
		out("Requested mtu is higher than active mtu \nChanging to active mtu - " + itoa(int(active)) + "\n")
		return active
	}
	return m
}

// bestGID is get_best_gid_index: an IPv4-mapped GID over another, then
// RoCE v2 over v1.
func (r *res) bestGID() (int, error) {
	tab, err := r.ctx.QueryGIDTable()
	if err != nil {
		return -1, err
	}
	byIndex := map[int]uverbs.GIDEntry{}
	for _, e := range tab {
		if int(e.Port) == r.c.IBPort {
			byIndex[int(e.Index)] = e
		}
	}
	v4 := func(i int) bool {
		e, ok := byIndex[i]
		return ok && netip.AddrFrom16(e.GID).Is4In6()
	}
	rate := func(i int) int {
		switch byIndex[i].Type {
		case ib.GIDTypeRoCEv2:
			return 2
		case ib.GIDTypeRoCEv1:
			return 1
		}
		return 0
	}
	best := 0
	for i := 1; i < int(r.port.GIDTableLen); i++ {
		_, okb := byIndex[best]
		_, oki := byIndex[i]
		switch {
		case v4(i) && !v4(best):
			best = i
		case !v4(i) && v4(best):
		case okb && oki && rate(best) < rate(i):
			best = i
		}
	}
	return best, nil
}

// create is ctx_init: buffer, PD, MR, CQs (one, or a send and a receive
// CQ for SEND tests), the completion channel with -e, and (makeQPs) the
// QPs in INIT, all on r.vctx.
func (r *res) create(size uint64, makeQPs bool) error {
	c := r.c
	var err error
	if r.vctx == nil {
		r.vctx = r.ctx
	}
	if c.Events {
		if r.ch, err = r.vctx.CreateCompChannel(); err != nil {
			return fail("Couldn't create completion channel\n Couldn't create IB resources\n")
		}
	}
	if r.pd, err = r.vctx.AllocPD(); err != nil {
		return fail("Couldn't allocate PD\n Couldn't create IB resources\n")
	}
	bs := int(size)
	if bs < r.cycleBuffer {
		bs = r.cycleBuffer
	}
	r.slot = inc(bs, r.cacheLine)
	total := r.slot * 2 * c.NumQPs
	if c.Conn == UD {
		total += r.cacheLine
	}
	if r.buf, err = membuf.New(total); err != nil {
		return fail("Couldn't allocate work buf.\n Couldn't create IB resources\n")
	}
	access := uverbs.AccessLocalWrite
	switch c.Verb {
	case Write:
		access |= uverbs.AccessRemoteWrite
	case Read:
		access |= uverbs.AccessRemoteRead | uverbs.AccessRemoteWrite
	}
	if r.mr, err = r.buf.Register(r.pd, access); err != nil {
		return fail("Couldn't allocate MR\n Couldn't create IB resources\n")
	}
	cqe := c.TxDepth * c.NumQPs
	if r.sendCQ, err = r.vctx.CreateCQ(uverbs.CQAttr{CQE: cqe, CompChannel: r.ch}); err != nil {
		return fail("Couldn't create CQ\n Couldn't create IB resources\n")
	}
	if c.Verb == Send {
		if r.recvCQ, err = r.vctx.CreateCQ(uverbs.CQAttr{CQE: c.RxDepth * c.NumQPs, CompChannel: r.ch}); err != nil {
			return fail("Couldn't create a receiver CQ\n Couldn't create IB resources\n")
		}
	}
	if makeQPs {
		for i := 0; i < c.NumQPs; i++ {
			qp, err := r.pd.CreateQP(r.qpInit())
			if err != nil {
				return fail("Couldn't create QP\n Couldn't create IB resources\n")
			}
			r.qps = append(r.qps, qp)
			o := uverbs.ConnectOptions{Port: uint8(c.IBPort), PKeyIndex: uint16(c.PKeyIndex), QKey: defQKey}
			if c.Conn != UD {
				o.Access = r.qpAccess()
			}
			if err := qp.Init(o); err != nil {
				return fail("Failed to modify QP to INIT\n Couldn't create IB resources\n")
			}
		}
	}
	if c.Conn == UD {
		if r.mirror, err = ah.NewMirror(r.ctx); err != nil {
			return fail("Couldn't read the GID table\n Couldn't create IB resources\n")
		}
	}
	return nil
}

// qpInit is a test QP's type and queues.
func (r *res) qpInit() uverbs.QPInit {
	c := r.c
	typ := map[Conn]ib.QPType{RC: ib.QPTypeRC, UC: ib.QPTypeUC, UD: ib.QPTypeUD}[c.Conn]
	rx := 1
	if c.Verb == Send {
		rx = c.RxDepth
	}
	recvCQ := r.sendCQ
	if r.recvCQ != nil {
		recvCQ = r.recvCQ
	}
	return uverbs.QPInit{Type: typ, SendCQ: r.sendCQ, RecvCQ: recvCQ,
		Cap: uverbs.QPCap{MaxSendWR: uint32(c.TxDepth), MaxRecvWR: uint32(rx), MaxSendSGE: 1, MaxRecvSGE: 1}}
}

// qpAccess is what a test QP lets the peer do.
func (r *res) qpAccess() uverbs.Access {
	switch r.c.Verb {
	case Write:
		return uverbs.AccessRemoteWrite
	case Read:
		return uverbs.AccessRemoteRead
	}
	return uverbs.AccessRemoteWrite | uverbs.AccessLocalWrite
}

// inc is perftest's INC: size rounded up to the cache line.
func inc(size, line int) int {
	if size > line {
		return (size + line - 1) / line * line
	}
	return line
}

// sendAddr and targetAddr are QP i's own send region and the region its
// peer writes, reads or sends into.
func (r *res) sendAddr(i int) uint64   { return r.buf.Addr(i * r.slot) }
func (r *res) targetOff(i int) int     { return (r.c.NumQPs + i) * r.slot }
func (r *res) targetAddr(i int) uint64 { return r.buf.Addr(r.targetOff(i)) }

// recvAddr is where QP i's receives land: the target region, UD's
// shifted so that the payload after the GRH starts on a cache line.
func (r *res) recvAddr(i int) uint64 {
	a := r.targetAddr(i)
	if r.c.Conn == UD {
		a += uint64(r.cacheLine - udAddition)
	}
	return a
}

// connect is ctx_connect: RTR towards the peer (with a global route on
// RoCE), RTS where this side sends, and for UD the address handle.
func (r *res) connect(my, rem []Dest) error {
	c := r.c
	for i, qp := range r.qps {
		o := uverbs.ConnectOptions{Port: uint8(c.IBPort), PKeyIndex: uint16(c.PKeyIndex), PSN: my[i].PSN, MTU: r.mtu,
			SL: uint8(c.SL), HopLimit: 0xff, TrafficClass: uint8(c.TClass), QKey: defQKey,
			Timeout: c.QPTimeout, RetryCnt: 7, RNRRetry: 7, MinRNRTimer: 12}
		if c.QPTimeout == 0 {
			o.Timeout = -1
		}
		o.MaxDestRdAtomic = uint8(my[i].OutReads)
		o.MaxRdAtomic = uint8(rem[i].OutReads)
		peer := uverbs.Peer{QPN: rem[i].QPN, PSN: rem[i].PSN, LID: rem[i].LID}
		if r.withGID {
			peer.GID = rem[i].GID
			o.SGIDIndex = uint8(c.GIDIndex)
		}
		if err := qp.ReadyToReceive(o, peer); err != nil {
			return fail("Failed to modify QP " + itoa(int(qp.Num())) + " to RTR\n Unable to Connect the HCA's through the link\n")
		}
		if c.Test == Lat || !c.isServer() || c.Duplex {
			if err := qp.ReadyToSend(o); err != nil {
				return fail("Failed to modify QP to RTS\n Unable to Connect the HCA's through the link\n")
			}
		}
		if c.Conn == UD && (c.Test == Lat || !c.isServer() || c.Duplex) {
			var a ah.Attr
			a.Port, a.SL, a.IB.DLID = uint32(c.IBPort), uint8(c.SL), rem[i].LID
			if spec, ok := r.mirror.Port(a.Port); ok && spec.RoCE {
				a.Type = ah.TypeRoCE
			} else {
				a.Type = ah.TypeIB
			}
			if r.withGID {
				a.Flags = ah.FlagGRH
				a.GRH.DGID, a.GRH.SGIDIndex, a.GRH.HopLimit, a.GRH.TrafficClass = rem[i].GID, uint8(c.GIDIndex), 0xff, uint8(c.TClass)
			}
			h, err := ah.CreateAH(r.pd, r.mirror.Table, &a)
			ah.Destroy(&a)
			if err != nil {
				return fail("Failed to create AH\n Unable to Connect the HCA's through the link\n")
			}
			r.ahs = append(r.ahs, h)
		}
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// noDevice is a failed ctx_find_dev: read_bw exits 7 without a word of
// its own, the others say so and exit 1.
func noDevice(c *Config, msg string) error {
	if c.Verb == Read && c.Test == BW {
		return &Failure{Stderr: msg, Code: 7}
	}
	return fail(msg + " Unable to find the Infiniband/RoCE device\n")
}
