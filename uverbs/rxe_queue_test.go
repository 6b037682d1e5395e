package uverbs

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// fakeQueue lays out a queue as rxe does, in ordinary memory.
func fakeQueue(t *testing.T, slots, elemShift int) (queue, []byte) {
	t.Helper()
	mem := make([]byte, queueHdrSize+slots<<elemShift)
	hdr := (*abi.RxeQueueBuf)(unsafe.Pointer(&mem[0]))
	hdr.Log2ElemSize, hdr.IndexMask = uint32(elemShift), uint32(slots-1)
	return queue{mem: mem, hdr: hdr, data: unsafe.Pointer(&mem[queueHdrSize]), mask: uint32(slots - 1), shift: uint32(elemShift)}, mem
}

// TestQueueIndices fills and drains a queue across the index wrap, as
// producer and consumer.
func TestQueueIndices(t *testing.T) {
	q, _ := fakeQueue(t, 4, 6)
	for round := 0; round < 5; round++ {
		if q.free() != 3 {
			t.Fatalf("round %d: %d free, want 3 (one slot stays empty)", round, q.free())
		}
		for i := 0; i < 3; i++ {
			prod, ok := q.produce()
			if !ok {
				t.Fatalf("round %d: full after %d", round, i)
			}
			*(*uint32)(q.elem(prod)) = uint32(round*10 + i)
			q.publish(prod)
		}
		if _, ok := q.produce(); ok {
			t.Fatalf("round %d: a fourth slot in a queue of 3", round)
		}
		for i := 0; i < 3; i++ {
			cons, ok := q.consume()
			if !ok || *(*uint32)(q.elem(cons)) != uint32(round*10+i) {
				t.Fatalf("round %d: element %d: ok %v", round, i, ok)
			}
			q.release(cons)
		}
		if _, ok := q.consume(); ok {
			t.Fatalf("round %d: element in an empty queue", round)
		}
		if p := atomic.LoadUint32(&q.hdr.ProducerIndex); p > q.mask {
			t.Fatalf("producer index %d not masked", p)
		}
	}
}

// TestPollDecodes reads a completion the way the kernel writes it.
func TestPollDecodes(t *testing.T) {
	q, _ := fakeQueue(t, 8, 6)
	prod, _ := q.produce()
	e := (*abi.UverbsWc)(q.elem(prod))
	*e = abi.UverbsWc{WrID: 42, Status: 0, Opcode: uint32(WCRecv), ByteLen: 100, QpNum: 17, WcFlags: uint32(WCWithImm)}
	binary.BigEndian.PutUint32(unsafe.Slice((*byte)(unsafe.Pointer(&e.Ex)), 4), 0x01020304)
	q.publish(prod)
	cq := &rxeCQ{cq: &CQ{object: object{ctx: &Context{prov: rxeProvider{}}, kind: "cq"}}, q: q}
	wc := make([]WC, 4)
	n, err := cq.poll(wc)
	if err != nil || n != 1 {
		t.Fatalf("Poll = %d, %v", n, err)
	}
	if w := wc[0]; w.ID != 42 || w.Opcode != WCRecv || w.ByteLen != 100 || w.QPNum != 17 || w.Imm != 0x01020304 || w.Flags != WCWithImm {
		t.Fatalf("%+v", w)
	}
	if n, _ := cq.poll(wc); n != 0 {
		t.Fatalf("second Poll = %d", n)
	}
}

// TestSendWQELayout checks the bytes of an RDMA write and an atomic WQE
// against struct rxe_send_wqe.
func TestSendWQELayout(t *testing.T) {
	q, mem := fakeQueue(t, 4, 8)
	qp := &rxeQP{qp: &QP{object: object{ctx: &Context{prov: rxeProvider{}}}, typ: ib.QPTypeRC, cap: QPCap{MaxSendSGE: 2, MaxInlineData: 32}}, sq: q}
	wr := SendWR{ID: 7, Opcode: OpRDMAWriteWithImm, Flags: SendSignaled, Imm: 0xa0b0c0d0,
		SGE: []SGE{{Addr: 0x1000, Length: 10, LKey: 5}, {Addr: 0x2000, Length: 20, LKey: 6}}, RemoteAddr: 0x9000, RKey: 77}
	if err := qp.postOneSend(&wr, false); err != nil {
		t.Fatal(err)
	}
	w := mem[queueHdrSize:]
	le := binary.LittleEndian
	if le.Uint64(w[0:]) != 7 || le.Uint32(w[12:]) != uint32(OpRDMAWriteWithImm) || le.Uint32(w[16:]) != uint32(SendSignaled) ||
		binary.BigEndian.Uint32(w[20:]) != 0xa0b0c0d0 || le.Uint64(w[24:]) != 0x9000 || le.Uint32(w[32:]) != 77 {
		t.Fatalf("rxe_send_wr: % x", w[:40])
	}
	if le.Uint64(w[152:]) != 0x9000 || le.Uint32(w[184:]) != 30 || le.Uint32(w[188:]) != 30 || le.Uint32(w[196:]) != 2 {
		t.Fatalf("iova/dma: % x", w[152:208])
	}
	if le.Uint64(w[208:]) != 0x1000 || le.Uint32(w[216:]) != 10 || le.Uint32(w[220:]) != 5 || le.Uint64(w[224:]) != 0x2000 {
		t.Fatalf("sge: % x", w[208:240])
	}
	atomicWR := SendWR{ID: 8, Opcode: OpAtomicCmpAndSwp, SGE: []SGE{{Addr: 0x3000, Length: 8, LKey: 5}},
		RemoteAddr: 0x8000, RKey: 78, CompareAdd: 3, Swap: 4}
	if err := qp.postOneSend(&atomicWR, false); err != nil {
		t.Fatal(err)
	}
	w = mem[queueHdrSize+256:]
	if le.Uint64(w[24:]) != 0x8000 || le.Uint64(w[32:]) != 3 || le.Uint64(w[40:]) != 4 || le.Uint32(w[48:]) != 78 ||
		le.Uint64(w[152:]) != 0x8000 || le.Uint32(w[176:]) != 1 {
		t.Fatalf("atomic: % x", w[:208])
	}
	if p := atomic.LoadUint32(&q.hdr.ProducerIndex); p != 2 {
		t.Fatalf("producer index %d after two posts", p)
	}
}

// TestMapQueueRefusesWrappingMask: a header whose mask is 0xffffffff
// (mask+1 wraps to 0, a "power of two" of no size in 32 bits) or
// otherwise describes more than the mapping is refused with EPROTO, and
// the mapping is undone; a sound header maps.
func TestMapQueueRefusesWrappingMask(t *testing.T) {
	fd, err := unix.MemfdCreate("rxe-queue", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	c := &Context{k: fdKernel{fd}, prov: rxeProvider{}, objects: map[uint64]any{}}
	t.Cleanup(func() { c.Close() })
	if err := unix.Ftruncate(fd, 2<<12); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mask, shift uint32
		ok          bool
	}{
		{0xffffffff, 0, false},
		{0xffffffff, 6, false},
		{0x7fffffff, 0, false},
		{0x3f, 6, true}, // 64 slots of 64 bytes: just fits beside the header
		{0x3f, 7, false},
		{0x5, 6, false}, // not a power of two
		{0x3, 21, false},
	} {
		var hdr abi.RxeQueueBuf
		hdr.IndexMask, hdr.Log2ElemSize = tc.mask, tc.shift
		b := make([]byte, queueHdrSize)
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&hdr)), queueHdrSize))
		if _, err := unix.Pwrite(fd, b, 0); err != nil {
			t.Fatal(err)
		}
		// The test header's elements start at queueHdrSize: size the
		// mapping so that 64×64 bytes fit exactly.
		q, err := mapRxeQueue(c, "cq", abi.MmInfo{Size: uint32(queueHdrSize + 64<<6)})
		if tc.ok {
			if err != nil {
				t.Fatalf("mask %#x shift %d: %v", tc.mask, tc.shift, err)
			}
			if err := q.unmap(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !errors.Is(err, unix.EPROTO) {
			q.unmap()
			t.Fatalf("mask %#x shift %d: %v, want EPROTO", tc.mask, tc.shift, err)
		}
	}
}

// TestPollHandsMarkersToDrain: a Poll that finds the marker of a Drain
// in progress keeps it out of its results and tells the Drain; markers of
// a QP no Drain waits for, and the other completions, are returned in
// order.
func TestPollHandsMarkersToDrain(t *testing.T) {
	q, _ := fakeQueue(t, 8, 6)
	put := func(id uint64, qpn uint32) {
		prod, _ := q.produce()
		*(*abi.UverbsWc)(q.elem(prod)) = abi.UverbsWc{WrID: id, QpNum: qpn}
		q.publish(prod)
	}
	put(1, 5)
	put(DrainWRID, 5)
	put(2, 6)
	put(DrainWRID+1, 7) // no Drain of QP 7
	put(DrainWRID+1, 5)
	cq := &CQ{object: object{ctx: &Context{prov: rxeProvider{}}, kind: "cq"}}
	x := &rxeCQ{cq: cq, q: q}
	cq.ops = x
	d := &drainer{qpn: 5, wake: make(chan struct{}, 1)}
	cq.addDrainer(d)
	wc := make([]WC, 3)
	n, err := cq.Poll(wc)
	if err != nil || n != 3 {
		t.Fatalf("Poll = %d, %v", n, err)
	}
	if wc[0].ID != 1 || wc[1].ID != 2 || wc[2].ID != DrainWRID+1 || wc[2].QPNum != 7 {
		t.Fatalf("polled %+v", wc[:n])
	}
	if !d.send.Load() || d.recv.Load() {
		t.Fatalf("drain saw send %v, recv %v after the first poll", d.send.Load(), d.recv.Load())
	}
	select {
	case <-d.wake:
	default:
		t.Fatal("the drain was not woken")
	}
	if n, err := cq.Poll(wc); err != nil || n != 0 || !d.done() {
		t.Fatalf("second Poll = %d, %v; drain done %v", n, err, d.done())
	}
	if got := x.produced(); got != 5 {
		t.Fatalf("produced %d, want the 5 completions, markers included", got)
	}
	cq.removeDrainer(d)
	put(DrainWRID, 5) // a marker that comes after its Drain gave up
	if n, _ := cq.Poll(wc); n != 1 || wc[0].ID != DrainWRID {
		t.Fatalf("a marker without its Drain: %d, %+v", n, wc[0])
	}
}
