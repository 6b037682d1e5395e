package rsocket

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// msgMode is how rsockets' 32-bit messages (rsproto.Msg) travel, chosen
// once per connection from the device's transport (rs_create_ep).
type msgMode uint8

const (
	// msgImm carries each message as the immediate data of an RDMA
	// WRITE WITH IMM (InfiniBand, RoCE): one work request a message, and
	// receives with no buffer.
	msgImm msgMode = iota
	// msgSend is rsockets' RS_OPT_MSG_SEND, for iWARP, which has no
	// immediate data: a message with data is an RDMA WRITE of the data
	// followed by a SEND of the message word, one without is the SEND
	// alone. The word travels inline, in the sender's byte order
	// (little-endian, as this side announces itself), and lands in
	// the receive's own 4-byte slot after the receive buffer (rbuf +
	// rbufSize + i×msgSize for receive i, whose id carries i).
	msgSend
)

// msgSize is the bytes of a message word sent as a SEND (RS_MSG_SIZE).
const msgSize = 4

// msgSendFlag marks the id of the SEND that carries a WRITE's message
// (RS_WR_ID_FLAG_MSG_SEND); its message's data is 0, so that its
// completion gives back a work request and no send buffer.
const msgSendFlag = 1 << 62

// modeOf is the mode of a device whose transport is t.
func modeOf(t uverbs.Transport) msgMode {
	if t == uverbs.TransportIWARP {
		return msgSend
	}
	return msgImm
}

// wrs is how many send work requests one message with data takes.
func (m msgMode) wrs() int {
	if m == msgSend {
		return 2
	}
	return 1
}

// slots is the bytes after the receive buffer that rq receives' message
// slots take.
func (m msgMode) slots(rq int) int {
	if m == msgSend {
		return rq * msgSize
	}
	return 0
}

// rsRecvWR is the receive that msgImm posts: no buffer, since every
// message is an RDMA WRITE WITH IMM (rs_post_recv).
var rsRecvWR = uverbs.RecvWR{ID: rsRecvFlag}

// rsRecvFlag marks receive work requests' ids (RS_WR_ID_FLAG_RECV).
const rsRecvFlag = 1 << 63

// postRecv posts one receive (rs_post_recv): in msgSend the next slot's,
// in turn.
func (r *rsResources) postRecv() error {
	if r.mode == msgImm {
		return r.qp.PostRecv(&rsRecvWR)
	}
	wr, sge := r.recvWR(r.recvNext)
	r.recvNext = (r.recvNext + 1) % r.rqSize
	wr.SGE = sge[:]
	return r.qp.PostRecv(&wr)
}

// recvWR is msgSend's receive i: its id and its slot.
func (r *rsResources) recvWR(i int) (uverbs.RecvWR, [1]uverbs.SGE) {
	return uverbs.RecvWR{ID: rsRecvFlag | uint64(i)},
		[1]uverbs.SGE{{Addr: r.rbuf.Addr(r.rbufSize + i*msgSize), Length: msgSize, LKey: r.rmr.LKey()}}
}

// recvMsg is the message a successful receive completion brought (the
// receive half of rs_poll_cq). A peer that sent no message word where
// one is due breaks the protocol.
func (c *conn) recvMsg(wc *uverbs.WC) (rsproto.Msg, error) {
	r := &c.res
	if r.mode == msgImm {
		if wc.Flags&uverbs.WCWithImm == 0 {
			return 0, fmt.Errorf("a message without immediate data: %w", errProtocol)
		}
		return rsproto.Msg(wc.Imm), nil
	}
	i := uint32(wc.ID)
	if wc.Opcode != uverbs.WCRecv || wc.ByteLen != msgSize || int(i) >= r.rqSize {
		return 0, fmt.Errorf("a %v of %d bytes into receive %d, not a %d-byte message: %w", wc.Opcode, wc.ByteLen, i, msgSize, errProtocol)
	}
	return rsproto.Msg(binary.LittleEndian.Uint32(r.rbuf.Bytes()[r.rbufSize+int(i)*msgSize:])), nil
}

// postMsg sends a message with no data (rs_post_msg); id is its
// completion's.
func (c *conn) postMsg(msg rsproto.Msg) bool {
	if c.res.mode == msgImm {
		return c.post(&uverbs.SendWR{ID: uint64(msg), Opcode: uverbs.OpRDMAWriteWithImm, Imm: uint32(msg)})
	}
	return c.postWord(uint64(msg), msg)
}

// postWriteMsg writes sges, or the inline bytes, to addr under rkey and
// sends msg with them (rs_post_write_msg); id is the WRITE's
// completion's. In msgSend that takes two work requests.
func (c *conn) postWriteMsg(id uint64, msg rsproto.Msg, sges []uverbs.SGE, inline []byte, flags uverbs.SendFlags, addr uint64, rkey uint32) bool {
	if c.res.mode == msgImm {
		return c.post(&uverbs.SendWR{ID: id, Opcode: uverbs.OpRDMAWriteWithImm, Imm: uint32(msg), Flags: flags,
			SGE: sges, Inline: inline, RemoteAddr: addr, RKey: rkey})
	}
	if !c.post(&uverbs.SendWR{ID: id, Opcode: uverbs.OpRDMAWrite, Flags: flags, SGE: sges, Inline: inline, RemoteAddr: addr, RKey: rkey}) {
		return false
	}
	return c.postWord(uint64(rsproto.MakeMsg(msg.Op(), 0))|msgSendFlag, msg)
}

// postWord SENDs msg's word inline. It is staged in the send buffer's
// word slot (after the control SGEs), which an inline send has copied
// by the time the post returns.
func (c *conn) postWord(id uint64, msg rsproto.Msg) bool {
	r := &c.res
	off := r.wordSlot()
	binary.LittleEndian.PutUint32(r.sbuf.Bytes()[off:], uint32(msg))
	c.wordSGE[0] = uverbs.SGE{Addr: r.sbuf.Addr(off), Length: msgSize, LKey: r.smr.LKey()}
	return c.post(&uverbs.SendWR{ID: id, Opcode: uverbs.OpSend, Flags: uverbs.SendInline, SGE: c.wordSGE[:]})
}

// wordSlot is where postWord stages a message word in the send buffer.
func (r *rsResources) wordSlot() int { return r.sbufSize + rsproto.SGESize*rsproto.QPCtrlSize }

// sbufLen is the send buffer's length: the data, the control SGEs, the
// word slot.
func (r *rsResources) sbufLen() int { return r.wordSlot() + msgSize }

// errSilentInitiator is why an iWARP responder's handshake ends when the
// initiator left before its first message.
var errSilentInitiator = fmt.Errorf("the initiator left before its first message: %w", errReset)

// awaitInitiator waits until a mute responder heard the initiator's first
// message (at once when not mute), the connection failed, or ctx ended.
// On iWARP that message is what the RTU is on InfiniBand: the Listener's
// handshake waits for it under its timeout, so that an initiator that
// connects and never speaks holds a handshake slot, never an accepted
// Conn that can send nothing.
func (c *conn) awaitInitiator(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case c.flow.err != nil:
			return c.flow.err
		case !c.flow.mute:
			return nil
		case !c.flow.connected:
			return errSilentInitiator
		}
		ch := c.changes()
		c.mu.Unlock()
		select {
		case <-ch:
			c.mu.Lock()
		case <-ctx.Done():
			c.mu.Lock()
			return ctx.Err()
		}
	}
}
