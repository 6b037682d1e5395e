package rsocket

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// rsState is what rsocket.c's state bits say of an established stream.
type rsState struct {
	readable bool // the peer may still send (no SHUTDOWN or DISCONNECT came)
	writable bool // this side may still send (no CloseWrite)
	// connected is false once either side disconnected: no more
	// control messages or receives are posted.
	connected bool
	// mute holds every send of an iWARP responder until the
	// initiator's first message came: MPA (RFC 5044) lets the initiator
	// send the first frame, and siw's initiator fails a connection
	// whose responder's frames come with or before its MPA reply
	// (CONNECT_ERROR). The initiator's first credit grant lifts it.
	mute bool
}

// rsFlow is one connection's protocol state (the stream part of struct
// rsocket), guarded by Conn.mu. Sequence numbers are 16 bits and wrap.
type rsFlow struct {
	rsState
	err error // why the connection failed, nil while it is healthy

	// Sending.
	sseqNo, sseqComp   uint16 // data messages sent; the peer's limit
	sqeAvail           int    // send work requests free for data
	ctrlSeqNo, ctrlMax uint32 // control messages posted; the most allowed
	sbufAvail          int    // send buffer bytes not in flight
	maxMsg             int    // the most bytes of one data message (maxMessage)
	sOff               int    // where the next data goes in the send buffer
	targetSGE          int    // which entry of the target SGL array is written to
	remoteSGL          rsproto.SGE
	remoteSGE          int              // which entry of the peer's array the next grant goes to
	peerOrder          binary.ByteOrder // how the peer wants its SGEs
	peerRQ             uint16           // the peer's receive queue: its grants are at most this far ahead

	// Receiving.
	rseqNo, rseqComp uint16   // data messages consumed; when to grant more
	rmsg             []uint32 // lengths of unread data messages: a ring of rqSize+1
	rhead, rtail     int
	rbufAvail        int // receive buffer bytes read, not yet granted
	rbufFree         int // offset of the next half to grant
	rOff             int // where the next unread byte is
	unread           int // bytes written by the peer, not read
}

// start sets the flow up from the peer's connection data (rs_init_bufs,
// rs_save_conn_data).
func (c *conn) start(peer rsproto.ConnData) {
	r := &c.res
	f := &c.flow
	f.rsState = rsState{readable: true, writable: true, connected: true}
	f.sqeAvail = r.sqSize - rsproto.QPCtrlSize
	f.ctrlMax = rsproto.QPCtrlSize
	f.sbufAvail = r.sbufSize
	f.maxMsg = rsproto.MaxTransfer
	f.rbufFree, f.rbufAvail = r.rbufSize/2, r.rbufSize/2
	f.rseqComp = uint16(r.rqSize / 2)
	f.rmsg = make([]uint32, r.rqSize+1)
	f.remoteSGL = peer.TargetSGL
	f.remoteSGE = 1 % int(peer.TargetSGL.Length)
	f.peerOrder = peer.SGEOrder()
	f.sseqComp = peer.Credits
	f.peerRQ = peer.Credits
	c.iomap.remote = peer.RemoteIOMap()
	c.putTarget(0, peer.DataBuf)
}

// ourConnData is what this side announces (rs_format_conn_data). Its
// credit updates and iomap entries come in little-endian order (no
// FlagNet); its iomap array follows the target SGL. Beyond
// rs_format_conn_data it carries the port's active MTU, in a byte
// rdma-core zeroes (peerPathMTU).
func (c *conn) ourConnData() rsproto.ConnData {
	r := &c.res
	return rsproto.ConnData{Version: rsproto.Version, Credits: uint16(r.rqSize), PathMTU: uint8(r.portMTU),
		Flags: rsproto.FlagIOMap, IOMapSize: rsproto.ValueToScale(r.iomapSize),
		TargetSGL: rsproto.SGE{Addr: r.tbuf.Addr(0), Key: r.tmr.RKey(), Length: rsproto.SGLSize},
		DataBuf:   rsproto.SGE{Addr: r.rbuf.Addr(0), Key: r.rmr.RKey(), Length: uint32(r.rbufSize / 2)}}
}

// peerPathMTU is the port MTU a peer's connection data announces, 0
// where it says none (rdma-core's rsockets): both sides then go to RTR
// with the smaller of theirs (rdma.ConnParam.PeerPathMTU), where RoCE's
// CM would give both the dialer's.
func peerPathMTU(privateData []byte) ib.MTU {
	cd, err := rsproto.UnmarshalConnData(privateData)
	if err != nil {
		return 0
	}
	return ib.MTU(cd.PathMTU)
}

// target and putTarget read and write entry i of the target SGL array,
// which the peer also writes (with RDMA), little-endian.
func (c *conn) target(i int) rsproto.SGE {
	s, _ := rsproto.DecodeSGE(c.res.tbuf.Bytes()[i*rsproto.SGESize:], binary.LittleEndian)
	return s
}

func (c *conn) putTarget(i int, s rsproto.SGE) {
	s.Put(c.res.tbuf.Bytes()[i*rsproto.SGESize:], binary.LittleEndian)
}

// canSend is rs_can_send.
func (c *conn) canSend() bool {
	f := &c.flow
	return !f.mute && f.sqeAvail >= c.res.mode.wrs() && f.sbufAvail >= rsproto.SendLowWater && f.sseqNo != f.sseqComp &&
		c.target(f.targetSGE).Length != 0
}

func (c *conn) ctrlAvail() bool { return !c.flow.mute && c.flow.ctrlSeqNo != c.flow.ctrlMax }

// ctrlAvailFor reports whether a credit update may go: it takes two
// control work requests in msgSend (rs_2ctrl_avail), whether or not it
// carries an SGE.
func (c *conn) ctrlAvailFor() bool {
	return !c.flow.mute && int32(c.flow.ctrlSeqNo+uint32(c.res.mode.wrs())-1-c.flow.ctrlMax) < 0
}

// allSendsDone is rs_conn_all_sends_done.
func (c *conn) allSendsDone() bool {
	return c.sendsInFlight() == 0 || !c.flow.connected
}

// fail records why the connection broke (the first reason stays),
// wakes every blocked call, and aborts the connection.
func (c *conn) fail(err error) {
	if c.flow.err == nil {
		c.flow.err = err
	}
	c.flow.connected = false
	c.broadcast()
	c.abort()
}

// post posts a send and fails the connection when it cannot.
func (c *conn) post(wr *uverbs.SendWR) bool {
	if err := c.postSend(wr); err != nil {
		c.fail(fmt.Errorf("post send: %w", err))
		return false
	}
	c.sent()
	return true
}

// postSend posts wr on the QP, which reads it (and the bytes it names or
// carries) during the call only. Neither wr nor what it points to
// escapes, so that a post costs no allocation and Write's bytes can go
// inline from where the caller has them: a func value would let them
// escape, so the engine tests' fake gets a copy (fakeWR).
func (c *conn) postSend(wr *uverbs.SendWR) error {
	if c.fakePost != nil {
		return c.fakePost(c.fake.copyOf(wr))
	}
	return c.res.qp.PostSend(wr)
}

// fakeWR is the copy of a request that the engine tests' fake gets, in
// memory of its own, valid until the next post: the fields rsocket
// sets, SGEs and inline bytes copied, so that no pointer of the
// request's reaches the heap.
type fakeWR struct {
	wr     uverbs.SendWR
	sge    []uverbs.SGE
	inline []byte
}

func (f *fakeWR) copyOf(wr *uverbs.SendWR) *uverbs.SendWR {
	f.sge = append(f.sge[:0], wr.SGE...)
	f.inline = append(f.inline[:0], wr.Inline...)
	f.wr = uverbs.SendWR{ID: wr.ID, Opcode: wr.Opcode, Flags: wr.Flags, Imm: wr.Imm, SGE: f.sge, RemoteAddr: wr.RemoteAddr, RKey: wr.RKey}
	if len(wr.Inline) != 0 {
		f.wr.Inline = f.inline
	}
	return &f.wr
}

// writeData sends up to len(b) bytes as one data message (rs_write_data)
// and returns how many; canSend must hold. A message that fits the QP's
// inline size goes from b straight into the work request (rsend's
// sq_inline case): one copy, and none into the send buffer, whose
// space it still takes until its completion, as rsockets' does.
func (c *conn) writeData(b []byte) int {
	n := min(len(b), c.sendRoom())
	if n <= c.res.inline {
		c.sendData(n, nil, b[:n])
		return n
	}
	c.fillRing(0, b[:n])
	c.sendRing(n)
	return n
}

// msgPackets is the most packets of the path MTU that one data message
// spans. rxe acknowledges a message's packets as they come but restarts
// its retry state only when a whole message completes, and ignores the
// peer's sequence-error NAKs while a retransmission is under way: on a
// wire that loses or reorders packets, each retransmission of a long
// message meets another fault and waits out an ACK timeout. 16 packets
// keep rsockets' 64 KiB messages on a 4096-byte MTU (two rxe devices in
// one host) and make them 16 KiB on Ethernet's 1500 (rxe's 1024).
const msgPackets = 16

// maxMessage is the most bytes of one data message on a QP whose path
// MTU attr gives: rsockets' RS_MAX_TRANSFER, or msgPackets packets of
// it where that is less.
func maxMessage(attr *uverbs.QPAttr) int {
	if attr == nil || attr.PathMTU.Bytes() == 0 {
		return rsproto.MaxTransfer
	}
	return min(rsproto.MaxTransfer, msgPackets*attr.PathMTU.Bytes())
}

// sendRoom is how many bytes the next data message may carry; canSend
// must hold.
func (c *conn) sendRoom() int {
	return min(c.flow.maxMsg, c.flow.sbufAvail, int(c.target(c.flow.targetSGE).Length))
}

// fillRing copies b into the send buffer at off bytes past where the
// next data goes, wrapping at its end.
func (c *conn) fillRing(off int, b []byte) {
	r := &c.res
	sb := r.sbuf.Bytes()[:r.sbufSize]
	k := copy(sb[(c.flow.sOff+off)%r.sbufSize:], b)
	copy(sb, b[k:])
}

// sendRing sends the n bytes at the head of the send buffer as one data
// message, inline when they fit (rs_write_data); 0 < n <= sendRoom.
func (c *conn) sendRing(n int) {
	sges, nsge := c.ringSGEs(n)
	c.sendData(n, sges[:nsge], nil)
}

// sendData sends n bytes as one data message: those sges name in the
// send buffer (inlined from there when they fit), or inline, the bytes
// themselves (rs_write_data); 0 < n <= sendRoom.
func (c *conn) sendData(n int, sges []uverbs.SGE, inline []byte) {
	f := &c.flow
	t := c.target(f.targetSGE)
	f.sseqNo++
	f.sqeAvail -= c.res.mode.wrs()
	f.sbufAvail -= n
	addr := t.Addr
	t.Addr += uint64(n)
	t.Length -= uint32(n)
	c.putTarget(f.targetSGE, t)
	if t.Length == 0 {
		f.targetSGE = (f.targetSGE + 1) % rsproto.SGLSize
	}
	var flags uverbs.SendFlags
	if inline == nil && n <= c.res.inline {
		flags = uverbs.SendInline
	}
	msg := rsproto.MakeMsg(rsproto.OpData, uint32(n))
	c.postWriteMsg(uint64(msg), msg, sges, inline, flags, addr, t.Key)
}

// postCtrl sends a message with no data (rs_post_msg); a control slot
// must be free.
func (c *conn) postCtrl(msg rsproto.Msg) {
	c.flow.ctrlSeqNo++
	c.postMsg(msg)
}

// keepAlive sends rsocket's keepalive: a 0-byte RDMA WRITE without
// immediate, which the peer never sees, but whose failure tells a dead
// peer (tcp_svc_send_keepalive).
func (c *conn) keepAlive() {
	if !c.flow.connected || !c.ctrlAvail() {
		return
	}
	c.flow.ctrlSeqNo++
	msg := rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlKeepAlive))
	c.post(&uverbs.SendWR{ID: uint64(msg), Opcode: uverbs.OpRDMAWrite})
}

// updateCredits grants the peer buffer space or messages when due
// (rs_update_credits, rs_send_credits).
func (c *conn) updateCredits() {
	f := &c.flow
	r := &c.res
	half := r.rbufSize / 2
	if !f.connected || !c.ctrlAvailFor() || !(f.rbufAvail >= half || int16(f.rseqNo-f.rseqComp) >= 0) {
		return
	}
	f.rseqComp = f.rseqNo + uint16(r.rqSize/2)
	msg := rsproto.MakeMsg(rsproto.OpSGL, uint32(f.rseqNo+uint16(r.rqSize)))
	if f.rbufAvail < half {
		c.postCtrl(msg)
		return
	}
	slot := r.sbufSize + rsproto.SGESize*int(f.ctrlSeqNo%rsproto.QPCtrlSize)
	rsproto.SGE{Addr: r.rbuf.Addr(f.rbufFree), Key: r.rmr.RKey(), Length: uint32(half)}.Put(r.sbuf.Bytes()[slot:], f.peerOrder)
	f.ctrlSeqNo += uint32(r.mode.wrs())
	c.sgeSGE[0] = uverbs.SGE{Addr: r.sbuf.Addr(slot), Length: rsproto.SGESize, LKey: r.smr.LKey()}
	c.postWriteMsg(uint64(msg), msg, c.sgeSGE[:], nil, 0, f.remoteSGL.Addr+uint64(f.remoteSGE*rsproto.SGESize), f.remoteSGL.Key)
	f.rbufAvail -= half
	f.rbufFree = (f.rbufFree + half) % r.rbufSize
	f.remoteSGE = (f.remoteSGE + 1) % int(f.remoteSGL.Length)
}

// errProtocol is the cause of a connection that the peer broke the
// rsocket protocol on.
var errProtocol = fmt.Errorf("rsocket protocol violation: %w", rsproto.ErrMalformed)

// errReset is the cause of a connection the peer dropped without an
// rsocket disconnect (killed, or its QP failed).
var errReset = fmt.Errorf("the peer left without a disconnect: %w", unix.ECONNRESET)

// progress polls the CQ empty and applies what it finds (rs_poll_cq),
// then grants credits when due; it reports whether anything changed.
func (c *conn) progress() bool {
	if c.res.cq == nil {
		return false
	}
	changed := false
	recvs := 0
	for {
		n, err := c.res.cq.Poll(c.wcs[:])
		if err != nil {
			c.fail(fmt.Errorf("poll cq: %w", err))
			return true
		}
		if n == 0 {
			break
		}
		changed = true
		for i := range c.wcs[:n] {
			if c.complete(&c.wcs[i]) {
				recvs++
			}
		}
	}
	if c.flow.connected {
		for ; recvs > 0; recvs-- {
			if err := c.res.postRecv(); err != nil {
				c.fail(fmt.Errorf("post recv: %w", err))
				break
			}
		}
	}
	c.progressed()
	c.updateCredits()
	return changed
}

// complete applies one completion and reports whether it used up a
// receive.
func (c *conn) complete(wc *uverbs.WC) bool {
	f := &c.flow
	if wc.ID&rsRecvFlag != 0 {
		if wc.Status != uverbs.WCSuccess {
			// Flushed after a disconnect, or the QP failed: not to be
			// reposted, and an error unless the connection was over.
			if f.connected {
				c.fail(&CompletionError{Op: "receive", Status: wc.Status})
			}
			return false
		}
		msg, err := c.recvMsg(wc)
		if err != nil {
			c.fail(err)
			return true
		}
		f.mute = false
		switch msg.Op() {
		case rsproto.OpSGL:
			// The peer grants up to its receive queue's size beyond the
			// messages it consumed, which are at most those we sent.
			comp := uint16(msg.Data())
			if comp-f.sseqNo > f.peerRQ {
				c.fail(fmt.Errorf("credits up to message %d, %d sent, a %d-message window: %w", comp, f.sseqNo, f.peerRQ, errProtocol))
				return true
			}
			f.sseqComp = comp
		case rsproto.OpIOMapSGL:
			c.iomapWritten(msg.Data())
		case rsproto.OpWrite:
		case rsproto.OpCtrl:
			switch rsproto.Ctrl(msg.Data()) {
			case rsproto.CtrlDisconnect:
				f.readable, f.writable, f.connected = false, false, false
			case rsproto.CtrlShutdown:
				if f.writable {
					f.readable = false
				} else {
					f.readable, f.connected = false, false
				}
			case rsproto.CtrlKeepAlive: // sent without immediate data: harmless
			default:
				c.fail(fmt.Errorf("message %v: %w", msg, errProtocol))
			}
		case rsproto.OpData:
			n := int(msg.Data())
			if n > c.res.rbufSize/2 || f.unread+n > c.res.rbufSize || (f.rtail+1)%len(f.rmsg) == f.rhead {
				c.fail(fmt.Errorf("%d bytes beyond the granted buffer: %w", n, errProtocol))
				return true
			}
			if n > 0 {
				f.rmsg[f.rtail] = uint32(n)
				f.rtail = (f.rtail + 1) % len(f.rmsg)
				f.unread += n
			} else {
				f.rseqNo++
			}
		default:
			c.fail(fmt.Errorf("message %v: %w", msg, errProtocol))
		}
		return true
	}
	msg := rsproto.Msg(uint32(wc.ID))
	c.dog.acked = true
	switch msg.Op() {
	case rsproto.OpSGL, rsproto.OpCtrl:
		f.ctrlMax++
		if msg.Op() == rsproto.OpCtrl && rsproto.Ctrl(msg.Data()) == rsproto.CtrlDisconnect {
			f.connected = false
		}
	default:
		f.sqeAvail++
		f.sbufAvail += int(msg.Data())
	}
	if wc.Status != uverbs.WCSuccess && f.connected {
		c.fail(&CompletionError{Op: msg.Op().String(), Status: wc.Status})
	}
	return false
}

// readData copies queued data into b (the copy loop of rrecv) and
// returns how many bytes.
func (c *conn) readData(b []byte) int {
	f := &c.flow
	r := &c.res
	rb := r.rbuf.Bytes()
	done := 0
	for done < len(b) && f.rhead != f.rtail {
		n := min(len(b)-done, int(f.rmsg[f.rhead]))
		if n == int(f.rmsg[f.rhead]) {
			f.rhead = (f.rhead + 1) % len(f.rmsg)
			f.rseqNo++
		} else {
			f.rmsg[f.rhead] -= uint32(n)
		}
		for n > 0 {
			k := copy(b[done:done+min(n, r.rbufSize-f.rOff)], rb[f.rOff:])
			f.rOff = (f.rOff + k) % r.rbufSize
			done += k
			n -= k
		}
	}
	f.unread -= done
	f.rbufAvail += done
	return done
}

// haveData reports whether data is queued.
func (c *conn) haveData() bool { return c.flow.rhead != c.flow.rtail }
