package uverbs

import (
	"encoding/binary"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// siwFake is a fake siw kernel: it answers the create commands with
// keys of rings it maps (anonymous memory, so the test reads what the
// provider wrote and writes what the driver would), and records the
// doorbells.
type siwFake struct {
	k     *fakeKernel
	rings map[int64][]byte
}

const (
	siwCQKey, siwSQKey, siwRQKey, siwSRQKey = 0x1000, 0x2000, 0x3000, 0x4000
	siwFakeCQE, siwFakeSQE, siwFakeRQE      = 8, 4, 4
)

func newSIWFake(t *testing.T) (*Context, *siwFake) {
	t.Helper()
	f := &siwFake{rings: map[int64][]byte{}}
	c, k := driverWriteContext(t, "siw0", ib.DriverSIW, func(w *abi.WriteCmd) error {
		switch w.Command {
		case abi.IB_USER_VERBS_CMD_CREATE_CQ:
			binary.LittleEndian.PutUint32(w.Resp[4:], siwFakeCQE)
			copy(w.DriverOut, kabi.Bytes(&abi.SiwUrespCreateCq{CqID: 1, NumCqe: siwFakeCQE, CqKey: siwCQKey}))
		case abi.IB_USER_VERBS_CMD_CREATE_QP:
			binary.LittleEndian.PutUint32(w.Resp[4:], 9) // qpn
			binary.LittleEndian.PutUint32(w.Resp[8:], siwFakeSQE)
			binary.LittleEndian.PutUint32(w.Resp[12:], siwFakeRQE)
			binary.LittleEndian.PutUint32(w.Resp[16:], 2) // max_send_sge
			binary.LittleEndian.PutUint32(w.Resp[20:], 2) // max_recv_sge
			binary.LittleEndian.PutUint32(w.Resp[24:], abi.SiwMaxInline)
			r := abi.SiwUrespCreateQp{QpID: 9, NumSqe: siwFakeSQE, NumRqe: siwFakeRQE, SqKey: siwSQKey, RqKey: siwRQKey}
			if kabi.Decode[abi.CreateQp](w.Req).IsSrq != 0 {
				r.RqKey, r.NumRqe = abi.SiwInvalUobjKey, 0
			}
			copy(w.DriverOut, kabi.Bytes(&r))
		case abi.IB_USER_VERBS_CMD_CREATE_SRQ:
			binary.LittleEndian.PutUint32(w.Resp[4:], siwFakeRQE)
			binary.LittleEndian.PutUint32(w.Resp[8:], 1)
			copy(w.DriverOut, kabi.Bytes(&abi.SiwUrespCreateSrq{NumRqe: siwFakeRQE, SrqKey: siwSRQKey}))
		}
		return nil
	})
	f.k = k
	k.onMmap = func(off int64, n int) ([]byte, error) {
		want := map[int64]int{siwCQKey: siwFakeCQE*32 + 8, siwSQKey: siwFakeSQE * 120, siwRQKey: siwFakeRQE * 112, siwSRQKey: siwFakeRQE * 112}[off]
		if n != want {
			t.Errorf("mmap of %d bytes at %#x, want %d", n, off, want)
			return nil, unix.EINVAL
		}
		b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_SHARED)
		if err == nil {
			f.rings[off] = b
		}
		return b, err
	}
	return c, f
}

// flags reads an element's 16-bit flags as the kernel does.
func siwFlags(b []byte, i, size int) uint16 { return binary.LittleEndian.Uint16(b[i*size+8:]) }

// TestSIWRings drives siw's data path against the fake kernel: the
// send and receive elements' bytes (struct siw_sqe, siw_rqe), the
// ownership flags, libsiw's doorbell rule, the completions (struct
// siw_cqe) and the arming word.
func TestSIWRings(t *testing.T) {
	littleEndian(t)
	c, f := newSIWFake(t)
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(buf) })
	copy(buf, "inline payload")
	base := uint64(uintptr(unsafe.Pointer(&buf[0])))
	cq, qp := siwFakeRC(t, c)
	if qp.MaxInline() != abi.SiwMaxInline {
		t.Fatalf("max inline %d", qp.MaxInline())
	}
	sq, rq := f.rings[siwSQKey], f.rings[siwRQKey]

	// A WRITE: one doorbell, the element's fields, flags last.
	f.k.doorbells = 0
	if err := qp.PostSend(&SendWR{ID: 0x11, Opcode: OpRDMAWrite, Flags: SendSignaled, SGE: []SGE{{Addr: base, Length: 100, LKey: 5}},
		RemoteAddr: 0xabc000, RKey: 0x77}); err != nil {
		t.Fatal(err)
	}
	e := (*abi.SiwSqe)(unsafe.Pointer(&sq[0]))
	if e.ID != 0x11 || e.Flags != abi.SiwWqeValid|abi.SiwWqeSignalled || e.NumSge != 1 || e.Opcode != abi.SiwOpWrite ||
		e.Rkey != 0x77 || e.Raddr != 0xabc000 || e.Sge[0] != (abi.SiwSge{Laddr: base, Length: 100, Lkey: 5}) {
		t.Fatalf("write sqe %+v", *e)
	}
	if f.k.doorbells != 1 || binary.LittleEndian.Uint32(f.k.lastDoorbell[:]) != abi.IB_USER_VERBS_CMD_POST_SEND ||
		kabi.Decode[abi.PostSend](f.k.lastDoorbell[8:]).QpHandle != qp.Handle() {
		t.Fatalf("%d doorbells, the last %x", f.k.doorbells, f.k.lastDoorbell)
	}
	// The kernel has not taken slot 0 yet: the next post rings nothing.
	if err := qp.PostSend(&SendWR{ID: 0x12, Opcode: OpSend, Flags: SendInline | SendSolicited, SGE: []SGE{{Addr: base, Length: 14}}}); err != nil {
		t.Fatal(err)
	}
	if f.k.doorbells != 1 {
		t.Fatalf("%d doorbells while the kernel works the queue", f.k.doorbells)
	}
	e = (*abi.SiwSqe)(unsafe.Pointer(&sq[120]))
	inl := unsafe.Slice((*byte)(unsafe.Pointer(&e.Sge[1])), 14)
	if e.Flags != abi.SiwWqeValid|abi.SiwWqeInline|abi.SiwWqeSolicited || e.Opcode != abi.SiwOpSend || e.Sge[0].Length != 14 || string(inl) != "inline payload" {
		t.Fatalf("inline sqe %+v %q", *e, inl)
	}
	// The kernel takes both; a post now rings again.
	binary.LittleEndian.PutUint16(sq[8:], 0)
	binary.LittleEndian.PutUint16(sq[120+8:], 0)
	if err := qp.PostSend(&SendWR{ID: 0x13, Opcode: OpRDMARead, SGE: []SGE{{Addr: base, Length: 8, LKey: 5}}, RemoteAddr: 8, RKey: 9}); err != nil {
		t.Fatal(err)
	}
	if f.k.doorbells != 2 || siwFlags(sq, 2, 120) != abi.SiwWqeValid || sq[2*120+11] != abi.SiwOpRead {
		t.Fatalf("read: %d doorbells, sqe flags %#x", f.k.doorbells, siwFlags(sq, 2, 120))
	}
	// A full queue: slot 3 free, then slot 0 still VALID after a wrap.
	if err := qp.PostSend(&SendWR{ID: 0x14, Opcode: OpSend}); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(sq[8:], abi.SiwWqeValid)
	if err := qp.PostSend(&SendWR{ID: 0x15, Opcode: OpSend}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("post to a full queue: %v", err)
	}

	// What iWARP forbids is refused before the queue, naming the verb.
	for _, wr := range []SendWR{
		{Opcode: OpSendWithImm}, {Opcode: OpRDMAWriteWithImm}, {Opcode: OpAtomicFetchAdd, SGE: []SGE{{Addr: base, Length: 8}}},
		{Opcode: OpAtomicCmpAndSwp, SGE: []SGE{{Addr: base, Length: 8}}}, {Opcode: OpLocalInv}, {Opcode: OpBindMW},
	} {
		if err := qp.PostSend(&wr); !errors.Is(err, ErrNotSupported) || !contains(err.Error(), wr.Opcode.String(), "iWARP") {
			t.Errorf("%v on siw: %v", wr.Opcode, err)
		}
	}
	if err := qp.PostSend(&SendWR{Opcode: OpRDMARead, SGE: []SGE{{Addr: base, Length: 8}, {Addr: base + 8, Length: 8}}}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("a READ into two SGEs: %v", err)
	}

	// Receives: the element, flags exactly VALID, no doorbell.
	n := f.k.doorbells
	if err := qp.PostRecv(&RecvWR{ID: 0x21, SGE: []SGE{{Addr: base, Length: 64, LKey: 5}, {Addr: base + 64, Length: 64, LKey: 5}}}); err != nil {
		t.Fatal(err)
	}
	r := (*abi.SiwRqe)(unsafe.Pointer(&rq[0]))
	if r.ID != 0x21 || r.Flags != abi.SiwWqeValid || r.NumSge != 2 || r.Sge[1] != (abi.SiwSge{Laddr: base + 64, Length: 64, Lkey: 5}) || f.k.doorbells != n {
		t.Fatalf("rqe %+v", *r)
	}

	// Completions: the kernel writes a CQE, flags last; Poll gives it
	// back by storing 0.
	cqm := f.rings[siwCQKey]
	kernelCQE := func(i int, id uint64, op uint8, status uint16, bytes uint32) {
		ce := (*abi.SiwCqe)(unsafe.Pointer(&cqm[i*32]))
		ce.ID, ce.Opcode, ce.Status, ce.Bytes, ce.QpID = id, op, status, bytes, 9
		atomic.StoreUint32(flagsWord(unsafe.Pointer(ce)), uint32(op)<<8|uint32(status)<<16|abi.SiwWqeValid)
	}
	kernelCQE(0, 0x11, abi.SiwOpWrite, abi.SiwWcSuccess, 100)
	kernelCQE(1, 0x21, abi.SiwOpReceive, abi.SiwWcWrFlushErr, 0)
	ctrl := (*uint32)(unsafe.Pointer(&cqm[siwFakeCQE*32]))
	if err := cq.RequestNotify(false); err != nil || atomic.LoadUint32(ctrl) != 3 {
		t.Fatalf("arm: %v, control word %d", err, atomic.LoadUint32(ctrl))
	}
	if err := cq.RequestNotify(true); err != nil || atomic.LoadUint32(ctrl) != 1 {
		t.Fatalf("arm solicited: %v, control word %d", err, atomic.LoadUint32(ctrl))
	}
	if got := cq.ops.produced(); got != 2 {
		t.Fatalf("produced %d", got)
	}
	wc := make([]WC, 4)
	if n, err := cq.Poll(wc); err != nil || n != 2 {
		t.Fatalf("poll: %d, %v", n, err)
	}
	if wc[0].ID != 0x11 || wc[0].Opcode != WCRDMAWrite || wc[0].Status != WCSuccess || wc[0].ByteLen != 100 || wc[0].QPNum != 9 ||
		wc[1].ID != 0x21 || wc[1].Opcode != WCRecv || wc[1].Status != WCWRFlushErr {
		t.Fatalf("completions %+v", wc[:2])
	}
	if cqm[8] != 0 || cqm[32+8] != 0 {
		t.Fatal("polled CQEs still VALID")
	}
	if n, _ := cq.Poll(wc); n != 0 {
		t.Fatalf("second poll %d", n)
	}

	// Nothing on the hot path allocates.
	binary.LittleEndian.PutUint16(sq[8:], 0)
	sg := []SGE{{Addr: base, Length: 8, LKey: 5}}
	swr := &SendWR{ID: 1, Opcode: OpSend, SGE: sg}
	rwr := &RecvWR{ID: 2, SGE: sg}
	if a := testing.AllocsPerRun(50, func() {
		for i := range sq[:siwFakeSQE*120] {
			sq[i] = 0
		}
		for i := range rq[:siwFakeRQE*112] {
			rq[i] = 0
		}
		kernelCQE(2, 3, abi.SiwOpSend, 0, 8)
		if err := qp.PostSend(swr); err != nil {
			t.Fatal(err)
		}
		if err := qp.PostRecv(rwr); err != nil {
			t.Fatal(err)
		}
		cq.Poll(wc)
	}); a != 0 {
		t.Fatalf("%v allocations per PostSend+PostRecv+Poll", a)
	}
}

// TestSIWRefusesWhatIWARPForbids: UD and UC QPs, CQ resize, memory
// windows and address handles are refused before anything is sent.
func TestSIWRefusesWhatIWARPForbids(t *testing.T) {
	littleEndian(t)
	c, f := newSIWFake(t)
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(CQAttr{CQE: 8})
	if err != nil {
		t.Fatal(err)
	}
	f.k.writes = nil
	for _, typ := range []ib.QPType{ib.QPTypeUD, ib.QPTypeUC} {
		if _, err := pd.CreateQP(QPInit{Type: typ, SendCQ: cq, RecvCQ: cq, Cap: QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); !errors.Is(err, ErrNotSupported) || !contains(err.Error(), typ.String(), "iWARP") {
			t.Errorf("%v QP on siw: %v", typ, err)
		}
	}
	if err := cq.Resize(16); !errors.Is(err, ErrNotSupported) {
		t.Errorf("resize: %v", err)
	}
	if _, err := pd.AllocMW(MWType2); !errors.Is(err, ErrNotSupported) || !contains(err.Error(), "memory window", "iWARP") {
		t.Errorf("alloc mw: %v", err)
	}
	if _, err := pd.CreateAH(AHAttr{Port: 1}); !errors.Is(err, ErrNotSupported) || !contains(err.Error(), "address handle", "iWARP") {
		t.Errorf("create ah: %v", err)
	}
	if len(f.k.writes) != 0 {
		t.Fatalf("%d commands sent", len(f.k.writes))
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// siwFakeRC makes a PD, a CQ and an RC QP (4 WRs and 2 SGEs each way,
// 64 bytes inline asked) on c, a Context of newSIWFake.
func siwFakeRC(t *testing.T, c *Context) (*CQ, *QP) {
	t.Helper()
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(CQAttr{CQE: siwFakeCQE})
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 2, MaxRecvSGE: 2, MaxInlineData: 64}})
	if err != nil {
		t.Fatal(err)
	}
	return cq, qp
}
