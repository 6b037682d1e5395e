package rsocket

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// engineConn is a conn with the flow state of a fresh connection, its
// buffers and memory regions that are not registered, and a send queue
// that records what is posted: enough for what completions, reads and
// writes do.
func engineConn(t testing.TB, rq, rbuf int) *conn {
	t.Helper()
	return engineConnMode(t, msgImm, rq, rbuf)
}

// engineConnMode is engineConn with messages carried as mode says.
func engineConnMode(t testing.TB, mode msgMode, rq, rbuf int) *conn {
	t.Helper()
	buf := func(n int) *membuf.Buffer {
		b, err := membuf.New(n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	const sbuf = 4096
	r := rsResources{sbufSize: sbuf, mode: mode}
	c := &conn{res: rsResources{rqSize: rq, sqSize: 16, rbufSize: rbuf, sbufSize: sbuf, rbuf: buf(rbuf + mode.slots(rq)),
		sbuf: buf(r.sbufLen()), tbuf: buf(rsproto.SGESize * rsproto.SGLSize), mode: mode,
		smr: &membuf.MR{MR: &uverbs.MR{}}, tmr: &membuf.MR{MR: &uverbs.MR{}}, rmr: &membuf.MR{MR: &uverbs.MR{}}},
		changed: make(chan struct{}), closed: make(chan struct{})}
	c.fakePost = func(wr *uverbs.SendWR) error { return nil }
	c.flow = rsFlow{rsState: rsState{readable: true, writable: true, connected: true},
		rmsg: make([]uint32, rq+1), sqeAvail: 12, ctrlMax: rsproto.QPCtrlSize, peerRQ: uint16(rq)}
	return c
}

func recvWC(m rsproto.Msg) *uverbs.WC {
	return &uverbs.WC{ID: rsRecvFlag, Flags: uverbs.WCWithImm, Imm: uint32(m)}
}

func TestEngineData(t *testing.T) {
	c := engineConn(t, 4, 1024)
	copy(c.res.rbuf.Bytes()[1000:], "abcdefghijklmnopqrstuvwx") // 24 bytes at the end
	copy(c.res.rbuf.Bytes(), "0123456789")                      // and 10 after the wrap
	c.flow.rOff = 1000
	for _, n := range []uint32{24, 0, 10} {
		if !c.complete(recvWC(rsproto.MakeMsg(rsproto.OpData, n))) {
			t.Fatal("a data message used no receive")
		}
	}
	if c.flow.err != nil || c.flow.unread != 34 || c.flow.rseqNo != 1 {
		t.Fatalf("after data: err %v, unread %d, rseqNo %d", c.flow.err, c.flow.unread, c.flow.rseqNo)
	}
	got := make([]byte, 30)
	n := c.readData(got)
	if n != 30 || string(got[:n]) != "abcdefghijklmnopqrstuvwx012345" {
		t.Fatalf("readData = %d %q", n, got[:n])
	}
	if c.flow.rseqNo != 2 || c.flow.rbufAvail != 30 || c.flow.rOff != 6 || !c.haveData() {
		t.Fatalf("after reading: rseqNo %d, rbufAvail %d, rOff %d", c.flow.rseqNo, c.flow.rbufAvail, c.flow.rOff)
	}
	n = c.readData(got)
	if n != 4 || !bytes.Equal(got[:4], []byte("6789")) || c.haveData() || c.flow.rseqNo != 3 || c.flow.unread != 0 {
		t.Fatalf("second readData = %d %q, rseqNo %d", n, got[:n], c.flow.rseqNo)
	}
}

// TestEnginePeerErrors: a peer that breaks the protocol fails the
// connection with an error, never a panic or an overrun.
func TestEnginePeerErrors(t *testing.T) {
	for name, msgs := range map[string][]rsproto.Msg{
		"more than half the buffer": {rsproto.MakeMsg(rsproto.OpData, 513)},
		"more than the buffer":      {rsproto.MakeMsg(rsproto.OpData, 512), rsproto.MakeMsg(rsproto.OpData, 512), rsproto.MakeMsg(rsproto.OpData, 1)},
		"more messages than credits": {rsproto.MakeMsg(rsproto.OpData, 1), rsproto.MakeMsg(rsproto.OpData, 1),
			rsproto.MakeMsg(rsproto.OpData, 1), rsproto.MakeMsg(rsproto.OpData, 1), rsproto.MakeMsg(rsproto.OpData, 1)},
		"reserved op":     {rsproto.MakeMsg(5, 1)},
		"unknown control": {rsproto.MakeMsg(rsproto.OpCtrl, 3)},
		// Nothing sent yet: the peer may grant 4 messages (its receive
		// queue), no more, and none less than it granted.
		"credits beyond the window": {rsproto.MakeMsg(rsproto.OpSGL, 5)},
		"credits behind the window": {rsproto.MakeMsg(rsproto.OpSGL, 0xFFFF)},
	} {
		c := engineConn(t, 4, 1024)
		for _, m := range msgs {
			c.complete(recvWC(m))
		}
		if !errors.Is(c.flow.err, rsproto.ErrMalformed) || c.flow.connected {
			t.Errorf("%s: err %v, connected %v", name, c.flow.err, c.flow.connected)
		}
	}
	c := engineConn(t, 4, 1024)
	c.complete(&uverbs.WC{ID: rsRecvFlag})
	if !errors.Is(c.flow.err, rsproto.ErrMalformed) {
		t.Errorf("a receive without immediate: %v", c.flow.err)
	}
}

// TestEngineRecvErrors: a receive that completes with an error fails a
// live connection with a CompletionError matching unix.EIO, and wakes
// every waiter; once the connection is over (a disconnect flushes the
// receive queue), it is no error.
func TestEngineRecvErrors(t *testing.T) {
	c := engineConn(t, 4, 1024)
	woken := c.changes()
	if c.complete(&uverbs.WC{ID: rsRecvFlag, Status: uverbs.WCRetryExcErr}) {
		t.Error("a failed receive counts as used: it would be reposted")
	}
	var ce *CompletionError
	if !errors.Is(c.flow.err, unix.EIO) || !errors.As(c.flow.err, &ce) || ce.Status != uverbs.WCRetryExcErr || ce.Op != "receive" || c.flow.connected {
		t.Errorf("a failed receive: %v, connected %v", c.flow.err, c.flow.connected)
	}
	if !isClosed(woken) {
		t.Error("a failed receive woke no waiter")
	}
	c = engineConn(t, 4, 1024)
	c.complete(recvWC(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlDisconnect))))
	if c.complete(&uverbs.WC{ID: rsRecvFlag, Status: uverbs.WCWRFlushErr}) || c.flow.err != nil {
		t.Errorf("a receive flushed after the peer's DISCONNECT: %v", c.flow.err)
	}
}

// TestEngineFailWakes: every way the connection fails (a post that
// fails, a failed send completion, a protocol violation) wakes the
// waiters, so that a Read blocked while a Write fails returns.
func TestEngineFailWakes(t *testing.T) {
	for name, fail := range map[string]func(c *conn){
		"keepalive post": func(c *conn) {
			c.fakePost = func(*uverbs.SendWR) error { return unix.ENOMEM }
			c.keepAlive()
		},
		"data post": func(c *conn) {
			c.putTarget(0, rsproto.SGE{Addr: 1 << 20, Length: 4096})
			c.flow.sseqComp, c.flow.sbufAvail = 4, 4096
			c.fakePost = func(*uverbs.SendWR) error { return unix.ENOMEM }
			c.writeData([]byte("x"))
		},
		"send completion": func(c *conn) {
			c.complete(&uverbs.WC{ID: uint64(rsproto.MakeMsg(rsproto.OpData, 1)), Status: uverbs.WCRetryExcErr})
		},
		"protocol": func(c *conn) { c.complete(recvWC(rsproto.MakeMsg(5, 0))) },
	} {
		c := engineConn(t, 4, 1024)
		woken := c.changes()
		fail(c)
		if !isClosed(woken) || c.flow.err == nil || c.flow.connected {
			t.Errorf("%s: woken %v, err %v", name, isClosed(woken), c.flow.err)
		}
	}
}

func TestEngineControl(t *testing.T) {
	c := engineConn(t, 4, 1024)
	c.complete(recvWC(rsproto.MakeMsg(rsproto.OpSGL, 3)))
	if c.flow.sseqComp != 3 {
		t.Fatalf("SGL: sseqComp %d", c.flow.sseqComp)
	}
	c.complete(recvWC(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlShutdown))))
	if c.flow.readable || !c.flow.writable || !c.flow.connected {
		t.Fatalf("SHUTDOWN while writable: %+v", c.flow.rsState)
	}
	c.complete(recvWC(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlDisconnect))))
	if c.flow.readable || c.flow.writable || c.flow.connected || c.flow.err != nil {
		t.Fatalf("DISCONNECT: %+v %v", c.flow.rsState, c.flow.err)
	}
	c = engineConn(t, 4, 1024)
	c.flow.writable = false
	c.complete(recvWC(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlShutdown))))
	if c.flow.readable || c.flow.connected {
		t.Fatalf("SHUTDOWN after our own: %+v", c.flow.rsState)
	}
}

func TestEngineSendCompletions(t *testing.T) {
	c := engineConn(t, 4, 1024)
	c.flow.sqeAvail, c.flow.sbufAvail, c.flow.ctrlSeqNo = 10, 100, 2
	c.complete(&uverbs.WC{ID: uint64(rsproto.MakeMsg(rsproto.OpData, 300))})
	c.complete(&uverbs.WC{ID: uint64(rsproto.MakeMsg(rsproto.OpSGL, 9))})
	if c.flow.sqeAvail != 11 || c.flow.sbufAvail != 400 || c.flow.ctrlMax != rsproto.QPCtrlSize+1 {
		t.Fatalf("after completions: sqe %d, sbuf %d, ctrlMax %d", c.flow.sqeAvail, c.flow.sbufAvail, c.flow.ctrlMax)
	}
	c.complete(&uverbs.WC{ID: uint64(rsproto.MakeMsg(rsproto.OpData, 1)), Status: uverbs.WCStatus(12)})
	var ce *CompletionError
	if !errors.Is(c.flow.err, unix.EIO) || !errors.As(c.flow.err, &ce) || ce.Op != "DATA" || c.flow.connected {
		t.Fatalf("a failed send: %v", c.flow.err)
	}
}

// FuzzEngineRecv: whatever immediates the peer sends, and however Read
// consumes them, the engine neither panics nor lets queued data exceed
// the receive buffer.
func FuzzEngineRecv(f *testing.F) {
	f.Add([]byte{0, 0, 0x10, 0, 0x80, 0, 0, 7, 0xe0, 0, 0, 2}, uint16(100))
	f.Fuzz(func(t *testing.T, imms []byte, readSize uint16) {
		c := engineConn(t, 4, 1024)
		buf := make([]byte, int(readSize)%2048+1)
		for len(imms) >= 4 && c.flow.err == nil {
			m := rsproto.Msg(uint32(imms[0])<<24 | uint32(imms[1])<<16 | uint32(imms[2])<<8 | uint32(imms[3]))
			imms = imms[4:]
			c.complete(recvWC(m))
			if c.flow.unread > c.res.rbufSize || c.flow.unread < 0 {
				t.Fatalf("%d bytes queued in a %d-byte buffer", c.flow.unread, c.res.rbufSize)
			}
			if len(imms)%8 == 0 {
				c.readData(buf)
			}
		}
		for c.haveData() {
			if c.readData(buf) == 0 {
				t.Fatal("queued data that reads as nothing")
			}
		}
		if c.flow.unread != 0 {
			t.Fatalf("%d bytes unread with no message queued", c.flow.unread)
		}
	})
}
