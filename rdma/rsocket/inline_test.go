package rsocket

import (
	"bytes"
	"testing"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestEngineInlineWrite: a message no longer than the QP's inline size
// goes from the caller's bytes into the WRITE (rsend's sq_inline case):
// no SGE, nothing copied into the send buffer, whose head stays; its
// bytes count against the send buffer until the completion, as
// rsockets counts them. A longer one is staged in the send buffer as
// before. In msgSend the message word follows as its own inline SEND.
func TestEngineInlineWrite(t *testing.T) {
	for _, mode := range []msgMode{msgImm, msgSend} {
		c := engineConnMode(t, mode, 4, 1024)
		c.res.inline = 64
		wrs, words := recorded(c)
		c.putTarget(0, rsproto.SGE{Addr: 1 << 20, Key: 7, Length: 4096})
		c.flow.sseqComp, c.flow.sbufAvail, c.flow.maxMsg = 4, 4096, rsproto.MaxTransfer
		clear(c.res.sbuf.Bytes())

		b := bytes.Repeat([]byte{0xa5}, 64)
		if n := c.writeData(b); n != 64 {
			t.Fatalf("mode %d: writeData = %d", mode, n)
		}
		msg := rsproto.MakeMsg(rsproto.OpData, 64)
		w := (*wrs)[0]
		op := uverbs.OpRDMAWriteWithImm
		if mode == msgSend {
			op = uverbs.OpRDMAWrite
		}
		if w.Opcode != op || w.ID != uint64(msg) || len(w.SGE) != 0 || !bytes.Equal(w.Inline, b) || w.RemoteAddr != 1<<20 || w.RKey != 7 {
			t.Errorf("mode %d: the WRITE %+v", mode, w)
		}
		if mode == msgImm && (w.Imm != uint32(msg) || len(*wrs) != 1) {
			t.Errorf("mode %d: imm %#x, %d posts", mode, w.Imm, len(*wrs))
		}
		if mode == msgSend && (len(*wrs) != 2 || (*wrs)[1].Opcode != uverbs.OpSend || len(*words) != 1 || (*words)[0] != uint32(msg)) {
			t.Errorf("mode %d: posts %+v, words %#x", mode, *wrs, *words)
		}
		if c.flow.sOff != 0 || bytes.Count(c.res.sbuf.Bytes()[:c.res.sbufSize], []byte{0}) != c.res.sbufSize {
			t.Errorf("mode %d: the send buffer was written (head %d)", mode, c.flow.sOff)
		}
		if c.flow.sbufAvail != 4096-64 || c.target(0).Addr != 1<<20+64 {
			t.Errorf("mode %d: sbuf %d, target %+v", mode, c.flow.sbufAvail, c.target(0))
		}

		// One byte more: staged, and inlined from the send buffer only
		// where it fits (it does not).
		*wrs = (*wrs)[:0]
		if n := c.writeData(make([]byte, 65)); n != 65 {
			t.Fatalf("mode %d: writeData = %d", mode, n)
		}
		if w := (*wrs)[0]; len(w.Inline) != 0 || len(w.SGE) != 1 || w.SGE[0].Length != 65 || w.Flags&uverbs.SendInline != 0 || c.flow.sOff != 65 {
			t.Errorf("mode %d: the longer WRITE %+v, head %d", mode, w, c.flow.sOff)
		}
		for _, wr := range append([]uverbs.SendWR{{ID: uint64(msg)}}, *wrs...) {
			c.complete(&uverbs.WC{ID: wr.ID, Opcode: uverbs.WCRDMAWrite})
		}
		if c.flow.sbufAvail != 4096 || c.flow.err != nil {
			t.Errorf("mode %d: after the completions sbuf %d, err %v", mode, c.flow.sbufAvail, c.flow.err)
		}
	}
}

// TestEngineWriteNoAllocs: the engine's part of a small Write, inline,
// and of a Read allocates nothing.
func TestEngineWriteNoAllocs(t *testing.T) {
	c := engineConn(t, 4, 1024)
	c.res.inline = 64
	c.putTarget(0, rsproto.SGE{Addr: 1 << 20, Key: 7, Length: 1 << 30})
	c.flow.maxMsg = rsproto.MaxTransfer
	b := make([]byte, 64)
	if a := testing.AllocsPerRun(100, func() {
		c.flow.sseqComp, c.flow.sbufAvail, c.flow.sqeAvail = c.flow.sseqNo+4, 4096, 12
		if n := c.writeData(b); n != 64 {
			t.Fatalf("writeData = %d", n)
		}
		c.broadcast()
		if !c.complete(recvWC(rsproto.MakeMsg(rsproto.OpData, 64))) {
			t.Fatal("a data message used no receive")
		}
		if n := c.readData(b); n != 64 {
			t.Fatalf("readData = %d", n)
		}
	}); a != 0 {
		t.Fatalf("%v allocations per message", a)
	}
}
