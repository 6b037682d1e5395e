package rsocket

import (
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// FuzzEnginePeer: whatever a peer sends (its connection data, the SGEs
// it writes into our target SGL array, and any sequence of messages),
// interleaved with our reads, writes and send completions, the engine
// neither panics nor touches memory outside its buffers: every local
// address it posts lies in the send buffer, queued data never exceeds
// the receive buffer, the counts of free send resources stay in range,
// and a failure is a protocol error (rsproto.ErrMalformed, unix.EPROTO)
// or a failed completion (unix.EIO).
func FuzzEnginePeer(f *testing.F) {
	engineSeeds(f)
	f.Fuzz(func(t *testing.T, cd, ops []byte) { fuzzEnginePeer(t, msgImm, cd, ops) })
}

// FuzzEnginePeerMsgSend is FuzzEnginePeer with the messages SENT into
// their receive slots, as on iWARP (msgSend): every message takes two
// sends, whose accounting the send queue's bound checks.
func FuzzEnginePeerMsgSend(f *testing.F) {
	engineSeeds(f)
	f.Fuzz(func(t *testing.T, cd, ops []byte) { fuzzEnginePeer(t, msgSend, cd, ops) })
}

// engineSeeds adds FuzzEnginePeer's seeds.
func engineSeeds(f *testing.F) {
	good := rsproto.ConnData{Version: rsproto.Version, Credits: 4,
		TargetSGL: rsproto.SGE{Addr: 0x1000, Key: 1, Length: rsproto.SGLSize},
		DataBuf:   rsproto.SGE{Addr: 0x8000, Key: 2, Length: 512}}
	// Ops, a byte each and its arguments: 0 a message (4 bytes of
	// immediate), 1 the peer writes our target array (offset, 16 bytes),
	// 2 Read (size), 3 Write (size), 4 the sends complete (status).
	f.Add(good.Marshal(), []byte{3, 200, 4, 0, 0, 0x80, 0, 0, 5, 0, 0, 0, 0, 100, 2, 50, 2, 255})
	bad := good
	bad.TargetSGL.Length = 0xFFFFFFFF
	bad.Credits = 0xFFFF
	f.Add(bad.Marshal(), []byte{1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 3, 255, 3, 255, 4, 12})
	f.Add(good.Marshal(), []byte{0, 0xE0, 0, 0, 3, 0, 0x80, 0, 0x10, 0, 0, 0, 9})
}

func fuzzEnginePeer(t *testing.T, mode msgMode, cd, ops []byte) {
	peer, err := rsproto.UnmarshalConnData(cd)
	if err != nil {
		if !errors.Is(err, rsproto.ErrMalformed) {
			t.Fatalf("bad connection data: %v", err)
		}
		return
	}
	c := engineConnMode(t, mode, 4, 1024)
	c.flow = rsFlow{rmsg: make([]uint32, 0)}
	c.start(peer)
	var sends []uverbs.SendWR
	sb := c.res.sbuf.Bytes()
	lo, hi := c.res.sbuf.Addr(0), c.res.sbuf.Addr(0)+uint64(len(sb))
	c.fakePost = func(wr *uverbs.SendWR) error {
		for _, s := range wr.SGE {
			if s.Addr < lo || s.Addr+uint64(s.Length) > hi {
				t.Fatalf("a send of [%#x, +%d) outside the send buffer [%#x, %#x)", s.Addr, s.Length, lo, hi)
			}
		}
		if len(sends) >= c.res.sqSize {
			t.Fatalf("%d sends posted on a %d-entry send queue", len(sends)+1, c.res.sqSize)
		}
		sends = append(sends, *wr)
		return nil
	}
	rb := make([]byte, 2048)
	wb := make([]byte, 8192)
	arg := func(n int) []byte {
		if len(ops) < n {
			ops = ops[len(ops):]
			return nil
		}
		a := ops[:n]
		ops = ops[n:]
		return a
	}
	for len(ops) > 0 {
		op := ops[0] % 5
		ops = ops[1:]
		switch op {
		case 0:
			if a := arg(4); a != nil {
				peerSends(c, rsproto.Msg(binary.BigEndian.Uint32(a)))
			}
		case 1:
			if a := arg(17); a != nil {
				copy(c.res.tbuf.Bytes()[int(a[0])%len(c.res.tbuf.Bytes()):], a[1:])
			}
		case 2:
			if a := arg(1); a != nil && c.haveData() {
				c.readData(rb[:int(a[0])*8+1])
				c.updateCredits()
			}
		case 3:
			if a := arg(1); a != nil && c.flow.connected && c.canSend() {
				c.writeData(wb[:int(a[0])*32+1])
			}
		case 4:
			if a := arg(1); a != nil {
				for _, wr := range sends {
					c.complete(&uverbs.WC{ID: wr.ID, Status: uverbs.WCStatus(a[0] % 2 * 12)})
				}
				sends = sends[:0]
			}
		}
		f := &c.flow
		if f.unread < 0 || f.unread > c.res.rbufSize {
			t.Fatalf("%d bytes queued in a %d-byte buffer", f.unread, c.res.rbufSize)
		}
		if f.sbufAvail < 0 || f.sbufAvail > c.res.sbufSize || f.sqeAvail < 0 || f.sqeAvail > c.res.sqSize {
			t.Fatalf("send buffer %d of %d free, %d of %d sends", f.sbufAvail, c.res.sbufSize, f.sqeAvail, c.res.sqSize)
		}
		if f.err != nil {
			if !errors.Is(f.err, unix.EPROTO) && !errors.Is(f.err, unix.EIO) {
				t.Fatalf("the connection failed with %v", f.err)
			}
			if f.connected {
				t.Fatalf("still connected after %v", f.err)
			}
		}
	}
}
