package rsocket

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// sentWC is the completion of msgSend's receive i after the peer SENT
// m's word into its slot (as a little-endian host does).
func sentWC(c *conn, i int, m rsproto.Msg) *uverbs.WC {
	binary.LittleEndian.PutUint32(c.res.rbuf.Bytes()[c.res.rbufSize+i*msgSize:], uint32(m))
	return &uverbs.WC{ID: rsRecvFlag | uint64(i), Opcode: uverbs.WCRecv, ByteLen: msgSize}
}

// peerSends delivers m as c's mode carries it: as immediate data, or
// SENT into a receive's slot (which one matters not to the engine).
func peerSends(c *conn, m rsproto.Msg) bool {
	if c.res.mode == msgImm {
		return c.complete(recvWC(m))
	}
	return c.complete(sentWC(c, int(uint32(m)%uint32(c.res.rqSize)), m))
}

// recorded makes c's posts land in a slice, with the word an inline
// SEND carries copied out as the post copies it.
func recorded(c *conn) (*[]uverbs.SendWR, *[]uint32) {
	var wrs []uverbs.SendWR
	var words []uint32
	c.fakePost = func(wr *uverbs.SendWR) error {
		w := *wr
		w.SGE = append([]uverbs.SGE(nil), wr.SGE...)
		w.Inline = append([]byte(nil), wr.Inline...)
		wrs = append(wrs, w)
		if wr.Opcode == uverbs.OpSend {
			off := int(wr.SGE[0].Addr - c.res.sbuf.Addr(0))
			words = append(words, binary.LittleEndian.Uint32(c.res.sbuf.Bytes()[off:]))
		}
		return nil
	}
	return &wrs, &words
}

// TestMsgModeOf: iWARP, and only iWARP, sends its messages (rs_create_ep).
func TestMsgModeOf(t *testing.T) {
	for tr, want := range map[uverbs.Transport]msgMode{uverbs.TransportIWARP: msgSend, uverbs.TransportIB: msgImm} {
		if got := modeOf(tr); got != want {
			t.Errorf("modeOf(%v) = %v, want %v", tr, got, want)
		}
	}
	if msgImm.wrs() != 1 || msgSend.wrs() != 2 || msgImm.slots(384) != 0 || msgSend.slots(384) != 384*4 {
		t.Error("wrs or slots wrong")
	}
}

// TestMsgSendRecvLayout: receive i is one 4-byte SGE at rbuf + rbufSize
// + 4i in the receive buffer's region, its id the receive flag and i
// (rs_post_recv).
func TestMsgSendRecvLayout(t *testing.T) {
	c := engineConnMode(t, msgSend, 4, 1024)
	if n := c.res.rbuf.Len(); n < 1024+4*msgSize {
		t.Fatalf("receive buffer of %d bytes: no room for 4 slots", n)
	}
	for i := range 4 {
		wr, sge := c.res.recvWR(i)
		if wr.ID != 1<<63|uint64(i) || sge[0].Addr != c.res.rbuf.Addr(1024+4*i) || sge[0].Length != 4 || sge[0].LKey != c.res.rmr.LKey() {
			t.Errorf("receive %d: id %#x, sge %+v", i, wr.ID, sge[0])
		}
	}
}

// TestMsgSendData: a data message is an RDMA WRITE of the data (its id
// the message, as with immediate data) followed by an inline SEND of
// the message word (its id the op with no data and msgSendFlag); it
// takes two send work requests, and its two completions give them and
// the send buffer back.
func TestMsgSendData(t *testing.T) {
	c := engineConnMode(t, msgSend, 4, 1024)
	wrs, words := recorded(c)
	c.putTarget(0, rsproto.SGE{Addr: 1 << 20, Key: 7, Length: 4096})
	c.flow.sseqComp, c.flow.sbufAvail, c.flow.maxMsg = 4, 4096, rsproto.MaxTransfer
	if n := c.writeData([]byte("hello")); n != 5 {
		t.Fatalf("writeData = %d", n)
	}
	msg := rsproto.MakeMsg(rsproto.OpData, 5)
	if len(*wrs) != 2 {
		t.Fatalf("%d posts, want 2", len(*wrs))
	}
	w, s := (*wrs)[0], (*wrs)[1]
	if w.Opcode != uverbs.OpRDMAWrite || w.ID != uint64(msg) || w.RemoteAddr != 1<<20 || w.RKey != 7 || len(w.SGE) != 1 || w.SGE[0].Length != 5 {
		t.Errorf("the WRITE: %+v", w)
	}
	if got := c.res.sbuf.Bytes()[:5]; string(got) != "hello" {
		t.Errorf("send buffer %q", got)
	}
	if s.Opcode != uverbs.OpSend || s.Flags&uverbs.SendInline == 0 || s.ID != uint64(rsproto.MakeMsg(rsproto.OpData, 0))|1<<62 ||
		len(s.SGE) != 1 || s.SGE[0].Length != 4 || len(*words) != 1 || (*words)[0] != uint32(msg) {
		t.Errorf("the SEND: %+v, words %#x", s, *words)
	}
	if c.flow.sqeAvail != 10 || c.flow.sbufAvail != 4091 || c.canSend() != true {
		t.Errorf("after the post: sqe %d, sbuf %d", c.flow.sqeAvail, c.flow.sbufAvail)
	}
	for _, wr := range *wrs {
		c.complete(&uverbs.WC{ID: wr.ID, Opcode: uverbs.WCRDMAWrite})
	}
	if c.flow.sqeAvail != 12 || c.flow.sbufAvail != 4096 || c.flow.err != nil {
		t.Errorf("after the completions: sqe %d, sbuf %d, err %v", c.flow.sqeAvail, c.flow.sbufAvail, c.flow.err)
	}
	// One free work request is not enough for a message (rs_can_send).
	c.flow.sqeAvail = 1
	if c.canSend() {
		t.Error("canSend with one send work request free")
	}
}

// TestMsgSendControl: a message with no data is one inline SEND of its
// word; a credit update with an SGE is a WRITE of the SGE and a SEND,
// two control work requests, and goes only when two are free
// (rs_give_credits, rs_send_credits).
func TestMsgSendControl(t *testing.T) {
	c := engineConnMode(t, msgSend, 4, 1024)
	wrs, words := recorded(c)
	c.flow.remoteSGL = rsproto.SGE{Addr: 0x5000, Key: 9, Length: rsproto.SGLSize}
	c.flow.peerOrder = binary.LittleEndian
	c.flow.rbufFree, c.flow.rbufAvail = 512, 512
	c.flow.ctrlSeqNo = rsproto.QPCtrlSize - 1 // one control work request free
	c.updateCredits()
	if len(*wrs) != 0 {
		t.Fatalf("a credit update with one control work request free: %+v", *wrs)
	}
	c.flow.ctrlSeqNo = 0
	c.updateCredits()
	msg := rsproto.MakeMsg(rsproto.OpSGL, 4)
	if len(*wrs) != 2 || c.flow.ctrlSeqNo != 2 {
		t.Fatalf("credit update: %d posts, ctrlSeqNo %d", len(*wrs), c.flow.ctrlSeqNo)
	}
	w, s := (*wrs)[0], (*wrs)[1]
	sge, _ := rsproto.DecodeSGE(c.res.sbuf.Bytes()[c.res.sbufSize:], binary.LittleEndian)
	if w.Opcode != uverbs.OpRDMAWrite || w.ID != uint64(msg) || w.RemoteAddr != 0x5000 || w.RKey != 9 ||
		w.SGE[0].Addr != c.res.sbuf.Addr(c.res.sbufSize) || w.SGE[0].Length != rsproto.SGESize ||
		sge != (rsproto.SGE{Addr: c.res.rbuf.Addr(512), Key: c.res.rmr.RKey(), Length: 512}) {
		t.Errorf("the SGE's WRITE: %+v, SGE %+v", w, sge)
	}
	if s.Opcode != uverbs.OpSend || s.ID != uint64(rsproto.MakeMsg(rsproto.OpSGL, 0))|1<<62 || (*words)[0] != uint32(msg) {
		t.Errorf("the SGE's SEND: %+v, word %#x", s, (*words)[0])
	}
	for _, wr := range *wrs {
		c.complete(&uverbs.WC{ID: wr.ID})
	}
	if c.flow.ctrlMax != rsproto.QPCtrlSize+2 {
		t.Errorf("ctrlMax %d after both completions", c.flow.ctrlMax)
	}
	*wrs, *words = nil, nil
	c.postCtrl(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlShutdown)))
	if len(*wrs) != 1 || (*wrs)[0].Opcode != uverbs.OpSend || (*wrs)[0].ID != uint64(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlShutdown))) ||
		(*words)[0] != uint32(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlShutdown))) || c.flow.ctrlSeqNo != 3 {
		t.Errorf("SHUTDOWN: %+v", *wrs)
	}
	// The keepalive stays a 0-byte RDMA WRITE (tcp_svc_send_keepalive).
	*wrs = nil
	c.keepAlive()
	if len(*wrs) != 1 || (*wrs)[0].Opcode != uverbs.OpRDMAWrite || len((*wrs)[0].SGE) != 0 {
		t.Errorf("keepalive: %+v", *wrs)
	}
}

// TestMsgSendRecv: the message of a receive is the word in its slot;
// a receive that got anything but 4 bytes breaks the protocol.
func TestMsgSendRecv(t *testing.T) {
	c := engineConnMode(t, msgSend, 4, 1024)
	copy(c.res.rbuf.Bytes(), "abc")
	if !c.complete(sentWC(c, 2, rsproto.MakeMsg(rsproto.OpData, 3))) || c.flow.unread != 3 || c.flow.err != nil {
		t.Fatalf("data in slot 2: unread %d, err %v", c.flow.unread, c.flow.err)
	}
	c.complete(sentWC(c, 3, rsproto.MakeMsg(rsproto.OpSGL, 4)))
	if c.flow.sseqComp != 4 {
		t.Errorf("SGL in slot 3: sseqComp %d", c.flow.sseqComp)
	}
	b := make([]byte, 8)
	if n := c.readData(b); string(b[:n]) != "abc" {
		t.Errorf("read %q", b[:n])
	}
	for name, wc := range map[string]*uverbs.WC{
		"no word":      {ID: rsRecvFlag, Opcode: uverbs.WCRecv},
		"8 bytes":      {ID: rsRecvFlag, Opcode: uverbs.WCRecv, ByteLen: 8},
		"with imm":     {ID: rsRecvFlag, Opcode: uverbs.WCRecvRDMAWithImm, ByteLen: 4, Flags: uverbs.WCWithImm},
		"not our slot": {ID: rsRecvFlag | 4, Opcode: uverbs.WCRecv, ByteLen: 4},
	} {
		c := engineConnMode(t, msgSend, 4, 1024)
		c.complete(wc)
		if !errors.Is(c.flow.err, rsproto.ErrMalformed) || c.flow.connected {
			t.Errorf("%s: err %v", name, c.flow.err)
		}
	}
}

// FuzzEngineRecvMsgSend is FuzzEngineRecv with the messages SENT.
func FuzzEngineRecvMsgSend(f *testing.F) {
	f.Add([]byte{0, 0, 0x10, 0, 0x80, 0, 0, 7, 0xe0, 0, 0, 2}, uint16(100))
	f.Fuzz(func(t *testing.T, words []byte, readSize uint16) {
		c := engineConnMode(t, msgSend, 4, 1024)
		buf := make([]byte, int(readSize)%2048+1)
		for len(words) >= 4 && c.flow.err == nil {
			peerSends(c, rsproto.Msg(binary.BigEndian.Uint32(words)))
			words = words[4:]
			if c.flow.unread > c.res.rbufSize || c.flow.unread < 0 {
				t.Fatalf("%d bytes queued in a %d-byte buffer", c.flow.unread, c.res.rbufSize)
			}
			c.readData(buf)
		}
		for c.haveData() {
			if c.readData(buf) == 0 {
				t.Fatal("queued data that reads as nothing")
			}
		}
	})
}

// TestMsgSendMute: an iWARP responder sends nothing (no credits, data,
// control message or keepalive) until the initiator's first message
// came, which MPA requires; an initiator, or a responder on IB, sends
// at once.
func TestMsgSendMute(t *testing.T) {
	c := engineConnMode(t, msgSend, 4, 1024)
	wrs, _ := recorded(c)
	c.flow.mute = true
	c.flow.remoteSGL = rsproto.SGE{Addr: 0x5000, Key: 9, Length: rsproto.SGLSize}
	c.flow.peerOrder = binary.LittleEndian
	c.flow.rbufFree, c.flow.rbufAvail = 512, 512
	c.putTarget(0, rsproto.SGE{Addr: 1 << 20, Key: 7, Length: 4096})
	c.flow.sseqComp, c.flow.sbufAvail, c.flow.maxMsg = 4, 4096, rsproto.MaxTransfer
	c.updateCredits()
	c.keepAlive()
	if len(*wrs) != 0 || c.canSend() || c.ctrlAvail() {
		t.Fatalf("a mute responder posted %+v (canSend %v)", *wrs, c.canSend())
	}
	c.complete(sentWC(c, 0, rsproto.MakeMsg(rsproto.OpSGL, 4)))
	if c.flow.mute || c.flow.err != nil {
		t.Fatalf("the initiator's first message: mute %v, err %v", c.flow.mute, c.flow.err)
	}
	c.updateCredits()
	if len(*wrs) != 2 || !c.canSend() {
		t.Fatalf("after the first message: %d posts, canSend %v", len(*wrs), c.canSend())
	}
}

// TestMsgSendAwaitInitiator: the Listener's handshake on iWARP waits for
// the initiator's first message under its context: it ends when the
// message comes, when ctx ends (a client that never speaks), or when the
// connection fails or the initiator leaves before it spoke.
func TestMsgSendAwaitInitiator(t *testing.T) {
	mute := func() *conn {
		c := engineConnMode(t, msgSend, 4, 1024)
		c.flow.mute = true
		return c
	}
	ctx := context.Background()

	c := mute()
	done := make(chan error, 1)
	go func() { done <- c.awaitInitiator(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("returned %v before the initiator spoke", err)
	case <-time.After(20 * time.Millisecond):
	}
	c.mu.Lock()
	c.complete(sentWC(c, 0, rsproto.MakeMsg(rsproto.OpSGL, 4)))
	c.broadcast()
	c.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatalf("after the first message: %v", err)
	}

	c = mute()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := c.awaitInitiator(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an initiator that never speaks: %v, want the context's deadline", err)
	}

	c = mute()
	go func() {
		time.Sleep(10 * time.Millisecond)
		c.mu.Lock()
		c.complete(sentWC(c, 1, rsproto.MakeMsg(rsproto.Op(1), 0))) // no such op
		c.mu.Unlock()
	}()
	if err := c.awaitInitiator(ctx); !errors.Is(err, rsproto.ErrMalformed) {
		t.Fatalf("a first message that breaks the protocol: %v, want ErrMalformed", err)
	}

	c = mute()
	c.flow.connected = false
	if err := c.awaitInitiator(ctx); !errors.Is(err, unix.ECONNRESET) {
		t.Fatalf("an initiator gone before it spoke: %v, want ECONNRESET", err)
	}

	c = engineConnMode(t, msgSend, 4, 1024) // the initiator's side: never mute
	if err := c.awaitInitiator(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMsgSendMuteShutdown: closing a responder whose initiator never
// spoke (the Listener's handshake timing out on it) neither sends
// anything nor waits for a control slot that never comes.
func TestMsgSendMuteShutdown(t *testing.T) {
	c := engineConnMode(t, msgSend, 4, 1024)
	wrs, _ := recorded(c)
	c.flow.mute = true
	c.linger = -1
	until := newDeadline() // never: the wait must not be what ends it
	defer until.stop()
	done := make(chan struct{})
	go func() {
		c.mu.Lock()
		c.shutdownLocked(true, true, until, nil)
		c.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the shutdown of a mute responder waits for a control slot")
	}
	if len(*wrs) != 0 {
		t.Fatalf("a mute responder's shutdown posted %+v", *wrs)
	}
}
