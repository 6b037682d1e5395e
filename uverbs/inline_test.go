package uverbs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// mmapped is n bytes of memory outside the Go heap, holding data, and
// its address: what a SendInline with SGEs copies from.
func mmapped(t *testing.T, data []byte) ([]byte, uint64) {
	t.Helper()
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(buf) })
	copy(buf, data)
	return buf, uint64(uintptr(unsafe.Pointer(&buf[0])))
}

// TestRxeInlineBytes checks the element an Inline send writes against
// struct rxe_send_wqe byte for byte: the same bytes as SendInline from
// one SGE (librxe's form), with the data at dma.inline_data (offset
// 208) and SEND_INLINE in send_flags; and that PostSend's work for it
// allocates nothing.
func TestRxeInlineBytes(t *testing.T) {
	littleEndian(t)
	q, mem := fakeQueue(t, 4, 8)
	qp := &rxeQP{qp: &QP{object: object{ctx: &Context{prov: rxeProvider{}}}, typ: ib.QPTypeRC, cap: QPCap{MaxSendSGE: 2, MaxInlineData: 48}}, sq: q}
	payload := []byte("forty-eight bytes of inline data, from the heap!")
	_, base := mmapped(t, payload)

	wr := SendWR{ID: 9, Opcode: OpRDMAWriteWithImm, Flags: SendSignaled, Imm: 0x01020304, Inline: payload, RemoteAddr: 0x7000, RKey: 33}
	if err := qp.postOneSend(&wr, false); err != nil {
		t.Fatal(err)
	}
	payload[0] = 'X' // read during the call only
	qp.ssn--         // the second element gets the same ssn
	viaSGE := SendWR{ID: 9, Opcode: OpRDMAWriteWithImm, Flags: SendSignaled | SendInline, Imm: 0x01020304,
		SGE: []SGE{{Addr: base, Length: uint32(len(payload))}}, RemoteAddr: 0x7000, RKey: 33}
	if err := qp.postOneSend(&viaSGE, false); err != nil {
		t.Fatal(err)
	}
	w0, w1 := mem[queueHdrSize:queueHdrSize+256], mem[queueHdrSize+256:queueHdrSize+512]
	if !bytes.Equal(w0, w1) {
		t.Fatalf("Inline and SendInline from an SGE differ:\n% x\n% x", w0, w1)
	}
	le := binary.LittleEndian
	if le.Uint64(w0[0:]) != 9 || le.Uint32(w0[12:]) != uint32(OpRDMAWriteWithImm) || le.Uint32(w0[16:]) != uint32(SendSignaled|SendInline) ||
		binary.BigEndian.Uint32(w0[20:]) != 0x01020304 || le.Uint64(w0[24:]) != 0x7000 || le.Uint32(w0[32:]) != 33 {
		t.Fatalf("rxe_send_wr: % x", w0[:40])
	}
	// iova, dma.length, dma.resid, dma.num_sge, then the data.
	if le.Uint64(w0[152:]) != 0x7000 || le.Uint32(w0[184:]) != 48 || le.Uint32(w0[188:]) != 48 || le.Uint32(w0[196:]) != 1 ||
		string(w0[208:256]) != "forty-eight bytes of inline data, from the heap!" {
		t.Fatalf("dma: % x", w0[152:256])
	}
	if p := atomic.LoadUint32(&q.hdr.ProducerIndex); p != 2 {
		t.Fatalf("producer index %d after two posts", p)
	}

	// Refused before the queue, EINVAL: nothing written.
	checkInlineRefusals(t, func(wr *SendWR) error { return qp.postOneSend(wr, false) }, 48, base, false)
	if p := atomic.LoadUint32(&q.hdr.ProducerIndex); p != 2 {
		t.Fatalf("producer index %d after refusals", p)
	}

	small := SendWR{ID: 1, Opcode: OpSend, Inline: payload[:16]}
	if a := testing.AllocsPerRun(100, func() {
		atomic.StoreUint32(&q.hdr.ConsumerIndex, atomic.LoadUint32(&q.hdr.ProducerIndex))
		if err := qp.postOneSend(&small, false); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%v allocations per Inline post", a)
	}
}

// checkInlineRefusals posts what no provider takes inline and wants
// EINVAL each time: bytes beyond the inline size, inline bytes with
// SGEs, a READ's or an atomic's data inline. On iWARP an atomic and a
// local invalidation are refused as not supported, before their data
// is looked at.
func checkInlineRefusals(t *testing.T, post func(*SendWR) error, maxInline int, base uint64, iwarp bool) {
	t.Helper()
	data := make([]byte, maxInline+1)
	for _, tc := range []struct {
		name string
		wr   SendWR
	}{
		{"too long", SendWR{Opcode: OpSend, Inline: data}},
		{"with an SGE", SendWR{Opcode: OpSend, Inline: data[:4], SGE: []SGE{{Addr: base, Length: 4}}}},
		{"READ", SendWR{Opcode: OpRDMARead, Inline: data[:8], RemoteAddr: 8, RKey: 1}},
		{"atomic", SendWR{Opcode: OpAtomicFetchAdd, Inline: data[:8], RemoteAddr: 8, RKey: 1}},
		{"invalidation", SendWR{Opcode: OpLocalInv, Inline: data[:8]}},
	} {
		var want error = unix.EINVAL
		if iwarp && (tc.wr.Opcode.atomic() || tc.wr.Opcode == OpLocalInv) {
			want = ErrNotSupported
		}
		if err := post(&tc.wr); !errors.Is(err, want) {
			t.Errorf("inline %s: %v, want %v", tc.name, err, want)
		}
	}
}

// TestSIWInlineBytes checks the element an Inline send writes against
// struct siw_sqe byte for byte: the same bytes as SendInline from one
// SGE, the data over sge[1..], its length in sge[0], INLINE in the
// flags; siw's own refusals (inline with opcodes other than SEND and
// WRITE) and the generic ones; and that PostSend with Inline, doorbell
// included, allocates nothing.
func TestSIWInlineBytes(t *testing.T) {
	littleEndian(t)
	c, f := newSIWFake(t)
	_, qp := siwFakeRC(t, c)
	sq := f.rings[siwSQKey]
	const sqe = 120
	payload := bytes.Repeat([]byte("0123456789abcdef"), 5) // SIW_MAX_INLINE, 80 bytes
	_, base := mmapped(t, payload)

	if err := qp.PostSend(&SendWR{ID: 0x31, Opcode: OpRDMAWrite, Flags: SendSignaled, Inline: payload, RemoteAddr: 0xa000, RKey: 0x55}); err != nil {
		t.Fatal(err)
	}
	if err := qp.PostSend(&SendWR{ID: 0x31, Opcode: OpRDMAWrite, Flags: SendSignaled | SendInline,
		SGE: []SGE{{Addr: base, Length: uint32(len(payload)), LKey: 3}}, RemoteAddr: 0xa000, RKey: 0x55}); err != nil {
		t.Fatal(err)
	}
	e0, e1 := sq[:sqe], sq[sqe:2*sqe]
	if !bytes.Equal(e0, e1) {
		t.Fatalf("Inline and SendInline from an SGE differ:\n% x\n% x", e0, e1)
	}
	le := binary.LittleEndian
	// id, flags (u16), num_sge (u8), opcode (u8), rkey, raddr, sge[0]
	// (laddr, length, lkey), then the data from sge[1] on.
	if le.Uint64(e0[0:]) != 0x31 || le.Uint16(e0[8:]) != abi.SiwWqeValid|abi.SiwWqeInline|abi.SiwWqeSignalled || e0[10] != 1 ||
		e0[11] != abi.SiwOpWrite || le.Uint32(e0[12:]) != 0x55 || le.Uint64(e0[16:]) != 0xa000 ||
		le.Uint64(e0[24:]) != 0 || le.Uint32(e0[32:]) != 80 || le.Uint32(e0[36:]) != 0 || !bytes.Equal(e0[40:120], payload) {
		t.Fatalf("siw_sqe: % x", e0)
	}

	// A SEND with no data inline says num_sge 0.
	binary.LittleEndian.PutUint16(sq[8:], 0)
	binary.LittleEndian.PutUint16(sq[sqe+8:], 0)
	if err := qp.PostSend(&SendWR{ID: 0x32, Opcode: OpSend, Flags: SendInline}); err != nil {
		t.Fatal(err)
	}
	if e := sq[2*sqe:]; e[10] != 0 || le.Uint32(e[32:]) != 0 {
		t.Fatalf("empty inline send: % x", e[:40])
	}

	checkInlineRefusals(t, qp.PostSend, abi.SiwMaxInline, base, true)
	if err := qp.PostSend(&SendWR{Opcode: OpSendWithInv, Inline: payload[:4], InvalidateRKey: 1}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("inline SEND_WITH_INV on siw: %v", err)
	}
	if siwFlags(sq, 3, sqe) != 0 {
		t.Fatalf("a refused post wrote slot 3: flags %#x", siwFlags(sq, 3, sqe))
	}

	small := &SendWR{ID: 1, Opcode: OpSend, Inline: payload[:64]}
	if a := testing.AllocsPerRun(100, func() {
		clear(sq[:siwFakeSQE*sqe])
		if err := qp.PostSend(small); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%v allocations per PostSend with Inline", a)
	}
}
