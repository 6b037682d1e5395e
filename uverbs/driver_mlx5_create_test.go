package uverbs

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// mlx5Unrefused is the tests' seam into mlx5's create path: the mlx5
// provider with its refusal lifted, so that the generic create code runs
// its prepare and new hooks against a fake kernel. Nothing outside the
// tests builds it; in production mlx5 refuses CQs, QPs and SRQs before
// anything is sent (TestMLX5WriteEncoding).
type mlx5Unrefused struct{ mlx5Provider }

func (mlx5Unrefused) refuseQueues(string) error { return nil }
func (mlx5Unrefused) hasDataPath() bool         { return true }

// mlx5CreateContext opens an mlx5 context on a fake kernel whose
// GET_CONTEXT answers resp (mlx5Response's limits unless changed), with
// shared queues (so that the generic code calls the new hooks); onWrite
// answers the commands after it.
func mlx5CreateContext(t *testing.T, resp []byte, onWrite func(w *abi.WriteCmd) error) (*Context, *fakeKernel) {
	t.Helper()
	littleEndian(t)
	k := &fakeKernel{onMmap: func(int64, int) ([]byte, error) { return nil, unix.ENODEV }}
	k.onWrite = func(w *abi.WriteCmd) error {
		if w.Command == abi.IB_USER_VERBS_CMD_GET_CONTEXT {
			binary.LittleEndian.PutUint32(w.Resp, uint32(testEventFD(t)))
			copy(w.DriverOut, resp)
			return nil
		}
		if onWrite != nil {
			return onWrite(w)
		}
		return nil
	}
	c, err := newContext(Device{Name: "mlx5_0", Uverbs: "uverbs0", DriverID: ib.DriverMLX5}, k, InterfaceWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	k.writes = nil
	return c, k
}

// mapped reports whether [addr, addr+n) is mapped in this process
// (mincore fails with ENOMEM on a hole).
func mapped(t *testing.T, addr uint64, n int) bool {
	t.Helper()
	ps := os.Getpagesize()
	vec := make([]byte, (n+ps-1)/ps)
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(addr), uintptr(n), uintptr(unsafe.Pointer(&vec[0])))
	switch e {
	case 0:
		return true
	case unix.ENOMEM:
		return false
	}
	t.Fatalf("mincore %#x: %v", addr, e)
	return false
}

// checkMem checks a queue buffer and doorbell record that a command
// names: page aligned and mapped (by this package: undo unmaps them,
// which Go heap memory never is).
func checkMem(t *testing.T, what string, buf uint64, bufLen int, db uint64) {
	t.Helper()
	ps := uint64(os.Getpagesize())
	if buf%ps != 0 || db%ps != 0 || buf == db {
		t.Errorf("%s: buffer %#x and doorbell record %#x are not pages of their own", what, buf, db)
	}
	if !mapped(t, buf, bufLen) || !mapped(t, db, 8) {
		t.Errorf("%s: buffer %#x (%d bytes) or doorbell record %#x not mapped", what, buf, bufLen, db)
	}
}

// TestMLX5CreateEncoding runs CreateCQ, CreateSRQ and CreateQP on mlx5
// through the seam and checks each create command byte for byte (the
// core command, then struct mlx5_ib_create_cq/srq/qp), the memory it
// names while the kernel has it, and that the created object is
// destroyed and its memory unmapped when the new hook refuses to work
// it.
func TestMLX5CreateEncoding(t *testing.T) {
	ps := os.Getpagesize()
	type seen struct{ buf, db uint64 }
	var cq, srq, qp seen
	c, k := mlx5CreateContext(t, mlx5Response(), func(w *abi.WriteCmd) error {
		switch w.Command {
		case abi.IB_USER_VERBS_CMD_ALLOC_PD:
			binary.LittleEndian.PutUint32(w.Resp, 7)
		case abi.IB_USER_VERBS_CMD_CREATE_CQ:
			d := kabi.Decode[abi.Mlx5IbCreateCq](w.DriverIn)
			cq = seen{d.BufAddr, d.DbAddr}
			checkMem(t, "cq", d.BufAddr, 32*64, d.DbAddr)
			copy(w.Resp, enc(4, 5, 4, 31))
			copy(w.DriverOut, enc(4, 0x77, 4, 0))
		case abi.IB_USER_VERBS_CMD_CREATE_SRQ:
			d := kabi.Decode[abi.Mlx5IbCreateSrq](w.DriverIn)
			srq = seen{d.BufAddr, d.DbAddr}
			checkMem(t, "srq", d.BufAddr, 32*32, d.DbAddr)
			copy(w.Resp, enc(4, 6, 4, 31, 4, 1, 4, 0x66))
		case abi.IB_USER_VERBS_CMD_CREATE_QP:
			d := kabi.Decode[abi.Mlx5IbCreateQp](w.DriverIn)
			qp = seen{d.BufAddr, d.DbAddr}
			checkMem(t, "qp", d.BufAddr, 16*16+64*64, d.DbAddr)
			copy(w.Resp, enc(4, 8, 4, 0x99))
		}
		return nil
	})
	if err := c.prov.refuseQueues("CQ"); err == nil {
		t.Fatal("mlx5 does not refuse queues")
	}
	c.prov = mlx5Unrefused{c.prov.(mlx5Provider)}

	_, err := c.CreateCQ(CQAttr{CQE: 16})
	if !errors.Is(err, ErrNoProvider) || !errors.Is(err, ErrNotSupported) {
		t.Fatalf("create cq on mlx5: %v", err)
	}
	// CREATE_CQ: in (8+32+32)/4=18, out (8+8)/4=4; user_handle 1, cqe 16
	// (the kernel makes it 32 entries, as libmlx5 does), vector 0, no
	// channel; buf_addr, db_addr, cqe_size 64, no compression, flags 0,
	// uar_page_index 0, reserved.
	checkWrite(t, k, "create cq", enc(cat(hdr(18, 18, 4), []uint64{8, respPtr, 8, 1, 4, 16, 4, 0, 4, 0xffffffff, 4, 0,
		8, cq.buf, 8, cq.db, 4, 64, 1, 0, 1, 0, 2, 0, 2, 0, 2, 0, 4, 0})...))
	checkWrite(t, k, "destroy cq", enc(cat(hdr(20, 6, 2), []uint64{8, respPtr, 4, 5, 4, 0})...))
	if mapped(t, cq.buf, ps) || mapped(t, cq.db, ps) {
		t.Error("cq memory still mapped after the CQ was destroyed")
	}

	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	k.writes = nil
	_, err = pd.CreateSRQ(SRQAttr{MaxWR: 16, MaxSGE: 1, SRQLimit: 2})
	if !errors.Is(err, ErrNoProvider) {
		t.Fatalf("create srq on mlx5: %v", err)
	}
	// CREATE_SRQ: in (8+32+32)/4=18, out (16+8)/4=6; user_handle 2, pd 7,
	// max_wr 16, max_sge 1, limit 2; buf_addr, db_addr, flags 0, uidx 0.
	checkWrite(t, k, "create srq", enc(cat(hdr(32, 18, 6), []uint64{8, respPtr, 8, 2, 4, 7, 4, 16, 4, 1, 4, 2,
		8, srq.buf, 8, srq.db, 4, 0, 4, 0, 4, 0, 4, 0})...))
	checkWrite(t, k, "destroy srq", enc(cat(hdr(35, 6, 1), []uint64{8, respPtr, 4, 6, 4, 0})...))
	if mapped(t, srq.buf, ps) || mapped(t, srq.db, ps) {
		t.Error("srq memory still mapped after the SRQ was destroyed")
	}

	_, err = pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: &CQ{object: object{ctx: c, handle: 5}}, RecvCQ: &CQ{object: object{ctx: c, handle: 5}},
		Cap: QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if !errors.Is(err, ErrNoProvider) {
		t.Fatalf("create qp on mlx5: %v", err)
	}
	// CREATE_QP: in (8+56+56)/4=30, out (32+40)/4=18; user_handle 3, pd 7,
	// CQs 5, no SRQ, caps, RC; buf_addr, db_addr, sq_wqe_count 64 (16 WQEs
	// of 4 basic blocks), rq_wqe_count 16, rq_wqe_shift 4, flags 0, uidx 0
	// (the context's first), bfreg_index 0, sq_buf_addr 0, ece 0, dci 0.
	checkWrite(t, k, "create qp", enc(cat(hdr(24, 30, 18), []uint64{8, respPtr, 8, 3, 4, 7, 4, 5, 4, 5, 4, 0,
		4, 16, 4, 16, 4, 1, 4, 1, 4, 0, 1, 0, 1, 2, 1, 0, 1, 0,
		8, qp.buf, 8, qp.db, 4, 64, 4, 16, 4, 4, 4, 0, 4, 0, 4, 0, 8, 0, 4, 0, 1, 0, 1, 0, 2, 0})...))
	checkWrite(t, k, "destroy qp", enc(cat(hdr(27, 6, 1), []uint64{8, respPtr, 4, 8, 4, 0})...))
	if mapped(t, qp.buf, ps) || mapped(t, qp.db, ps) {
		t.Error("qp memory still mapped after the QP was destroyed")
	}
	if len(k.writes) != 0 {
		t.Errorf("%d more writes", len(k.writes))
	}
	// The QP's user index went back: the next QP gets it again.
	d, err := c.prov.prepareQP(&QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.failed()
	if u := kabi.Decode[abi.Mlx5IbCreateQp](d.in).Uidx; u != 0 {
		t.Errorf("uidx %d after the first QP's was freed", u)
	}
}

// TestMLX5PrepareUndo calls the prepare hooks directly: the driver data
// and response room have the header's sizes, the memory is mapped page
// aligned, undo unmaps it (more than once harmlessly), and QPs' user
// indexes are unique until freed.
func TestMLX5PrepareUndo(t *testing.T) {
	c, k := mlx5CreateContext(t, mlx5Response(), nil)
	p := c.prov.(mlx5Provider)
	type prepared struct {
		name      string
		d         driverIO
		buf, db   uint64
		bufLen    int
		in, out   int
		uidx      uint32
		wantUIDX  uint32
		checkUIDX bool
	}
	var all []prepared
	d, err := p.prepareCQ(&CQAttr{CQE: 100})
	if err != nil {
		t.Fatal(err)
	}
	cq := kabi.Decode[abi.Mlx5IbCreateCq](d.in)
	all = append(all, prepared{name: "cq", d: d, buf: cq.BufAddr, db: cq.DbAddr, bufLen: 128 * 64, in: 32, out: 8})
	for i, init := range []QPInit{
		{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1}},
		{Type: ib.QPTypeUD, Cap: QPCap{MaxSendWR: 8, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}},
	} {
		d, err := p.prepareQP(&init)
		if err != nil {
			t.Fatal(err)
		}
		qp := kabi.Decode[abi.Mlx5IbCreateQp](d.in)
		s, _ := mlx5QPSize(&init, c.MLX5())
		all = append(all, prepared{name: "qp", d: d, buf: qp.BufAddr, db: qp.DbAddr, bufLen: s.bufLen, in: 56, out: 40,
			uidx: qp.Uidx, wantUIDX: uint32(i), checkUIDX: true})
	}
	d, err = p.prepareSRQ(&SRQAttr{MaxWR: 100, MaxSGE: 4})
	if err != nil {
		t.Fatal(err)
	}
	srq := kabi.Decode[abi.Mlx5IbCreateSrq](d.in)
	all = append(all, prepared{name: "srq", d: d, buf: srq.BufAddr, db: srq.DbAddr, bufLen: 128 * 128, in: 32, out: 8})

	for _, a := range all {
		if len(a.d.in) != a.in || len(a.d.out) != a.out || a.d.undo == nil {
			t.Errorf("%s: driver data %d bytes, response room %d, undo %v", a.name, len(a.d.in), len(a.d.out), a.d.undo != nil)
		}
		checkMem(t, a.name, a.buf, a.bufLen, a.db)
		if a.checkUIDX && a.uidx != a.wantUIDX {
			t.Errorf("%s: uidx %d, want %d", a.name, a.uidx, a.wantUIDX)
		}
	}
	for _, a := range all {
		a.d.failed()
		a.d.failed()
		if mapped(t, a.buf, a.bufLen) || mapped(t, a.db, 8) {
			t.Errorf("%s: memory still mapped after undo", a.name)
		}
	}
	if len(k.writes) != 0 {
		t.Errorf("prepare hooks sent %d commands", len(k.writes))
	}
}

// TestMLX5CQInit: every CQE of a new CQ buffer is owned by software
// (op_own, its last byte, holds MLX5_CQE_INVALID in the high nibble), as
// libmlx5's mlx5_alloc_cq_buf leaves it.
func TestMLX5CQInit(t *testing.T) {
	buf := make([]byte, 4*64)
	mlx5InitCQEs(buf, 4)
	for i := range 4 {
		for j, b := range buf[i*64 : i*64+64] {
			want := byte(0)
			if j == 63 {
				want = 0xf0
			}
			if b != want {
				t.Fatalf("cqe %d byte %d is %#x", i, j, b)
			}
		}
	}
}

// TestMLX5CQEntries checks libmlx5's CQ size rule,
// roundup_pow_of_two(cqe + 1) up to 2^24.
func TestMLX5CQEntries(t *testing.T) {
	for _, tc := range []struct{ cqe, want int }{
		{1, 2}, {15, 16}, {16, 32}, {31, 32}, {32, 64}, {100, 128}, {1<<24 - 1, 1 << 24}, {1 << 24, 0}, {0, 0},
	} {
		got, err := mlx5CQEntries(tc.cqe)
		if got != tc.want || (err != nil) != (tc.want == 0) {
			t.Errorf("cqe %d: %d entries (%v), want %d", tc.cqe, got, err, tc.want)
		}
	}
}

// TestMLX5QPSizes checks libmlx5's QP sizing (mlx5_calc_wq_size) for a
// few QPInits against mlx5Response's limits (512-byte descriptors, 2^15
// basic blocks and receive WRs). RC's send WQE starts with 192 bytes of
// overhead (a memory-window bind), UD's with 64 (control and address
// vector).
func TestMLX5QPSizes(t *testing.T) {
	m := decodeMLX5Context(&mlx5GetContextAttempts(4096)[0], mlx5Response())
	srq := &SRQ{}
	for _, tc := range []struct {
		name string
		init QPInit
		want mlx5QPSizes // zero: EINVAL
	}{
		// 192+16 -> 256-byte WQEs; 16*256 = 4096 bytes = 64 blocks.
		// Receive: 16-byte entries, 16 of them.
		{"rc", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}},
			mlx5QPSizes{sqWQEBBs: 64, rqWQEs: 16, rqWQEShift: 4, sqOffset: 256, bufLen: 256 + 4096}},
		// Inline 64: 192 + align(4+64, 16) = 272 > 192+32 -> 320-byte
		// WQEs; 100*320 -> 32768 bytes = 512 blocks. Receive: 3 SGEs ->
		// 64-byte entries, 128 of them.
		{"rc inline", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 100, MaxRecvWR: 100, MaxSendSGE: 2, MaxRecvSGE: 3, MaxInlineData: 64}},
			mlx5QPSizes{sqWQEBBs: 512, rqWQEs: 128, rqWQEShift: 6, sqOffset: 8192, bufLen: 8192 + 32768}},
		// UC has RC's overhead; one receive WR still takes a basic block
		// (four 16-byte entries).
		{"uc", QPInit{Type: ib.QPTypeUC, Cap: QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}},
			mlx5QPSizes{sqWQEBBs: 4, rqWQEs: 4, rqWQEShift: 4, sqOffset: 64, bufLen: 64 + 256}},
		// UD: 64+16 -> 128-byte WQEs; 8*128 = 1024 bytes = 16 blocks.
		{"ud", QPInit{Type: ib.QPTypeUD, Cap: QPCap{MaxSendWR: 8, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}},
			mlx5QPSizes{sqWQEBBs: 16, rqWQEs: 4, rqWQEShift: 4, sqOffset: 64, bufLen: 64 + 1024}},
		// With an SRQ there is no receive queue.
		{"rc srq", QPInit{Type: ib.QPTypeRC, SRQ: srq, Cap: QPCap{MaxSendWR: 1, MaxRecvWR: 8, MaxSendSGE: 1}},
			mlx5QPSizes{sqWQEBBs: 4, bufLen: 256}},
		// (512-192)/16 = 20 send SGEs at most.
		{"rc 20 sges", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 1, MaxSendSGE: 20}},
			mlx5QPSizes{sqWQEBBs: 8, bufLen: 512}},
		{"rc 21 sges", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 1, MaxSendSGE: 21}}, mlx5QPSizes{}},
		// 192 + align(4+400, 16) = 608 > 512.
		{"rc inline 400", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 1, MaxInlineData: 400}}, mlx5QPSizes{}},
		{"rc recv wr", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxRecvWR: 1<<15 + 1, MaxRecvSGE: 1}}, mlx5QPSizes{}},
		// 2^15 blocks at most: 2^13 WQEs of 4 blocks fit, one more does not.
		{"rc sq limit", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 1 << 13, MaxSendSGE: 1}},
			mlx5QPSizes{sqWQEBBs: 1 << 15, bufLen: 1 << 21}},
		{"rc sq over", QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 1<<13 + 1, MaxSendSGE: 1}}, mlx5QPSizes{}},
	} {
		got, err := mlx5QPSize(&tc.init, m)
		if tc.want == (mlx5QPSizes{}) {
			if !errors.Is(err, unix.EINVAL) {
				t.Errorf("%s: %+v, %v; want EINVAL", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
		// What the kernel pins from the command (set_user_buf_size).
		if k := int(got.rqWQEs)<<got.rqWQEShift + int(got.sqWQEBBs)*64; k != got.bufLen {
			t.Errorf("%s: buffer %d bytes, the kernel takes %d", tc.name, got.bufLen, k)
		}
	}
}

// TestMLX5SRQSizes checks the SRQ rule (the kernel's create_srq_user and
// libmlx5 without its wait queue): max(32, 16+16*max_sge) rounded up to
// a power of two, times roundup_pow_of_two(max_wr+1).
func TestMLX5SRQSizes(t *testing.T) {
	m := decodeMLX5Context(&mlx5GetContextAttempts(4096)[0], mlx5Response())
	for _, tc := range []struct {
		attr        SRQAttr
		n, size     int
		wantInvalid bool
	}{
		{SRQAttr{MaxWR: 1, MaxSGE: 1}, 2, 32, false},
		{SRQAttr{MaxWR: 16, MaxSGE: 1}, 32, 32, false},
		{SRQAttr{MaxWR: 100, MaxSGE: 4}, 128, 128, false},
		{SRQAttr{MaxWR: 15, MaxSGE: 32}, 16, 1024, false},
		{SRQAttr{MaxWR: 1, MaxSGE: 33}, 0, 0, true},        // 512/16 SGEs at most
		{SRQAttr{MaxWR: 1<<15 + 1, MaxSGE: 1}, 0, 0, true}, // max_srq_recv_wr
	} {
		n, size, err := mlx5SRQSize(&tc.attr, m)
		if tc.wantInvalid != errors.Is(err, unix.EINVAL) || !tc.wantInvalid && (n != tc.n || size != tc.size) {
			t.Errorf("%+v: %d entries of %d bytes, %v", tc.attr, n, size, err)
		}
	}
}

// TestMLX5DynamicUAR: a context whose kernel granted dynamic UARs
// (tot_bfregs 0) needs a UAR page allocated for each CQ and QP, which
// the data path would do; the hooks refuse before mapping anything.
// SRQs need none.
func TestMLX5DynamicUAR(t *testing.T) {
	resp := mlx5Response()
	binary.LittleEndian.PutUint32(resp[8:], 0) // tot_bfregs
	c, _ := mlx5CreateContext(t, resp, nil)
	p := c.prov.(mlx5Provider)
	if _, err := p.prepareCQ(&CQAttr{CQE: 1}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("cq: %v", err)
	}
	if _, err := p.prepareQP(&QPInit{Type: ib.QPTypeRC, Cap: QPCap{MaxSendWR: 1}}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("qp: %v", err)
	}
	d, err := p.prepareSRQ(&SRQAttr{MaxWR: 1, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	d.failed()
}
