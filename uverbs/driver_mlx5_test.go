package uverbs

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

func littleEndian(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
}

// driverWriteContext opens a write()-interface context for driver on a
// fake kernel; onWrite answers the commands after GET_CONTEXT (nil: all
// succeed with zero responses).
func driverWriteContext(t *testing.T, name string, driver ib.DriverID, onWrite func(w *abi.WriteCmd) error) (*Context, *fakeKernel) {
	t.Helper()
	k := &fakeKernel{}
	k.onWrite = func(w *abi.WriteCmd) error {
		if w.Command == abi.IB_USER_VERBS_CMD_GET_CONTEXT {
			binary.LittleEndian.PutUint32(w.Resp, uint32(testEventFD(t)))
			return nil
		}
		if onWrite != nil {
			return onWrite(w)
		}
		return nil
	}
	c, err := newContext(Device{Name: name, Uverbs: "uverbs0", DriverID: driver}, k, InterfaceWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, k
}

func TestMLX5DefaultBFRegs(t *testing.T) {
	for _, tc := range []struct {
		page          int
		total, lowLat uint32
	}{
		{4096, 16, 4},   // libmlx5 on x86-64
		{16384, 16, 4},  // 8 bfregs per page, below the default
		{65536, 32, 20}, // ppc64/arm64 64K pages: a page's worth, all beyond 12 low-latency
	} {
		total, lowLat := mlx5DefaultBFRegs(tc.page)
		if total != tc.total || lowLat != tc.lowLat {
			t.Errorf("page %d: %d/%d bfregs, want %d/%d", tc.page, total, lowLat, tc.total, tc.lowLat)
		}
	}
}

// mlx5Request is struct mlx5_ib_alloc_ucontext_req_v2 as libmlx5 fills
// it on 4K pages: total_num_bfregs 16, num_low_latency_bfregs 4, flags,
// comp_mask 0, max_cqe_version 1, reserved0/1/2, lib_caps 4K_UAR|DYN_UAR.
func mlx5Request(flags uint64) []byte {
	return enc(4, 16, 4, 4, 4, flags, 4, 0, 1, 1, 1, 0, 2, 0, 4, 0, 8, 3)
}

// mlx5Response is a GET_CONTEXT driver response as a ConnectX-6 on a 4K
// page kernel would fill it.
func mlx5Response() []byte {
	return enc(4, 1<<18, 4, 256, 4, 16, 4, 64, // qp_tab_size, bf_reg_size, tot_bfregs, cache_line_size
		2, 512, 2, 512, 4, 1<<15, 4, 1<<15, 4, 1<<15, // max_sq/rq_desc_sz, max_send_wqebb, max_recv_wr, max_srq_recv_wr
		2, 1, 2, 0, 4, 0x7, 4, 72, // num_ports, flow_action_flags, comp_mask (clock, dump mkey, ECE), response_length
		1, 1, 1, 3, 1, 3, 1, 1, // cqe_version 1, cmds_supp_uhw both, eth_min_inline IP, clock_info_versions V1
		8, 0x1010, 4, 12, 4, 2, 4, 64, 4, 0x100) // hca_core_clock_offset, log_uar_size, num_uars_per_page, num_dyn_bfregs, dump_fill_mkey
}

// TestMLX5GetContextIoctl checks GET_CONTEXT on mlx5 through
// RDMA_VERBS_IOCTL: the driver request byte for byte (UHW_IN), the
// response buffer (UHW_OUT, 72 bytes) and its decoding.
func TestMLX5GetContextIoctl(t *testing.T) {
	littleEndian(t)
	var uhwIn []byte
	k := &fakeKernel{}
	k.onIoctl = func(call *abi.Ioctl) error {
		switch {
		case call.Object() == abi.UVERBS_OBJECT_DEVICE && call.Method() == abi.UVERBS_METHOD_GET_CONTEXT:
			uhwIn = append([]byte(nil), call.Buf(call.Find(abi.UVERBS_ATTR_UHW_IN))...)
			o := call.Find(abi.UVERBS_ATTR_UHW_OUT)
			copy(call.Buf(o), mlx5Response())
			call.SetOutput(o)
		case call.Object() == abi.UVERBS_OBJECT_ASYNC_EVENT:
			call.SetData(0, uint64(testEventFD(t)))
		case call.Method() == abi.UVERBS_METHOD_INVOKE_WRITE:
			return unix.ENOSPC
		}
		return nil
	}
	c, err := newContext(Device{Name: "mlx5_0", Uverbs: "uverbs0", DriverID: ib.DriverMLX5}, k, InterfaceAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if os.Getpagesize() == 4096 && !bytes.Equal(uhwIn, mlx5Request(1)) {
		t.Errorf("mlx5 request:\n got %x\nwant %x", uhwIn, mlx5Request(1))
	}
	// Header (4 attrs, driver id 1), NUM_COMP_VECTORS, CORE_SUPPORT,
	// UHW_IN (32 bytes by pointer), UHW_OUT (72 bytes).
	ptr := "????????????????"
	want := hex.EncodeToString(enc(2, 24+4*16, 2, 0, 2, 3, 2, 4, 8, 0, 4, 1, 4, 0)) +
		"0000" + "0400" + "0100" + "0000" + ptr + "0100" + "0800" + "0100" + "0000" + ptr +
		"0010" + "2000" + "0100" + "0000" + ptr + "0110" + "4800" + "0100" + "0000" + ptr
	got := hex.EncodeToString(k.ioctls[0])
	if len(got) != len(want) {
		t.Fatalf("get context:\n got %s\nwant %s", got, want)
	}
	for j := range want {
		if want[j] != '?' && want[j] != got[j] {
			t.Fatalf("get context differs at byte %d:\n got %s\nwant %s", j/2, got, want)
		}
	}
	m := c.MLX5()
	if m == nil {
		t.Fatal("no mlx5 context")
	}
	wantCtx := &MLX5Context{RequestedBFRegs: m.RequestedBFRegs, RequestedLowLatBFRegs: m.RequestedLowLatBFRegs,
		RequestLen: 32, DEVX: true, ResponseLength: 72, QPTableSize: 1 << 18, BFRegSize: 256, TotalBFRegs: 16,
		CacheLineSize: 64, MaxSQDescSize: 512, MaxRQDescSize: 512, MaxSendWQEBB: 1 << 15, MaxRecvWR: 1 << 15,
		MaxSRQRecvWR: 1 << 15, NumPorts: 1, Mask: MLX5MaskCoreClockOffset | MLX5MaskDumpFillMKey | MLX5MaskECE,
		CQEVersion: 1, CmdsSuppUHW: MLX5SuppUHWQueryDevice | MLX5SuppUHWCreateAH, EthMinInline: MLX5InlineIP,
		ClockInfoVersions: 1, HCACoreClockOffset: 0x1010, LogUARSize: 12, NumUARsPerPage: 2, NumDynBFRegs: 64,
		DumpFillMKey: 0x100}
	if d := cmp.Diff(wantCtx, m); d != "" {
		t.Errorf("decoded mlx5 context (-want +got):\n%s", d)
	}
	if m.UARSize() != 4096 || m.EthMinInlineBytes() != 18 || m.Mask.String() != "CORE_CLOCK_OFFSET|DUMP_FILL_MKEY|ECE" {
		t.Errorf("uar size %d, inline %d, mask %v", m.UARSize(), m.EthMinInlineBytes(), m.Mask)
	}
}

// TestMLX5GetContextFallbacks: a kernel that refuses the request gets
// the shorter forms and then the DEVX-less ones, in libmlx5's order.
func TestMLX5GetContextFallbacks(t *testing.T) {
	type try struct {
		n     int
		flags uint32
	}
	var tries []try
	k := &fakeKernel{onWrite: func(w *abi.WriteCmd) error {
		in := w.DriverIn
		tries = append(tries, try{len(in), binary.LittleEndian.Uint32(in[8:])})
		if len(in) != 16 || binary.LittleEndian.Uint32(in[8:]) != 0 {
			return unix.EINVAL
		}
		binary.LittleEndian.PutUint32(w.Resp, uint32(testEventFD(t)))
		binary.LittleEndian.PutUint32(w.DriverOut[40:], 44) // response_length: up to cqe_version
		return nil
	}}
	c, err := newContext(Device{Name: "mlx5_0", Uverbs: "uverbs0", DriverID: ib.DriverMLX5}, k, InterfaceWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := []try{{32, 1}, {24, 1}, {16, 1}, {32, 0}, {24, 0}, {16, 0}}
	if d := cmp.Diff(want, tries, cmp.AllowUnexported(try{})); d != "" {
		t.Fatalf("attempts (-want +got):\n%s", d)
	}
	if m := c.MLX5(); m.RequestLen != 16 || m.DEVX || m.ResponseLength != 44 {
		t.Fatalf("granted %+v", m)
	}
	if m := c.MLX5(); m.UARSize() != os.Getpagesize() || m.EthMinInlineBytes() != 18 {
		t.Fatalf("old-kernel defaults: uar %d inline %d", m.UARSize(), m.EthMinInlineBytes())
	}

	// A kernel that refuses every form: the open fails with its error.
	k2 := &fakeKernel{onWrite: func(w *abi.WriteCmd) error { return unix.EINVAL }}
	if _, err := newContext(Device{Name: "mlx5_0", Uverbs: "uverbs0", DriverID: ib.DriverMLX5}, k2, InterfaceWrite); !errors.Is(err, unix.EINVAL) || len(k2.writes) != 6 {
		t.Fatalf("all refused: %v after %d writes", err, len(k2.writes))
	}
	// Other drivers send no such request and try once.
	k3 := &fakeKernel{onWrite: func(w *abi.WriteCmd) error { return unix.EINVAL }}
	if _, err := newContext(Device{Name: "rxe0", Uverbs: "uverbs0", DriverID: ib.DriverRXE}, k3, InterfaceWrite); !errors.Is(err, unix.EINVAL) || len(k3.writes) != 1 {
		t.Fatalf("rxe: %v after %d writes", err, len(k3.writes))
	}
}

// TestMLX5WriteEncoding checks every mlx5 command this package sends over
// write() byte for byte, and that CQ, QP and SRQ creation are refused
// before anything is sent.
func TestMLX5WriteEncoding(t *testing.T) {
	littleEndian(t)
	if os.Getpagesize() != 4096 {
		t.Skip("the expected request is libmlx5's for 4K pages")
	}
	k := &fakeKernel{}
	k.onWrite = func(w *abi.WriteCmd) error {
		switch w.Command {
		case abi.IB_USER_VERBS_CMD_GET_CONTEXT:
			binary.LittleEndian.PutUint32(w.Resp, uint32(testEventFD(t)))
			copy(w.DriverOut, mlx5Response())
		case abi.IB_USER_VERBS_CMD_ALLOC_PD:
			binary.LittleEndian.PutUint32(w.Resp, 7)
			binary.LittleEndian.PutUint32(w.DriverOut, 0x1234) // pdn
		case abi.IB_USER_VERBS_CMD_CREATE_AH:
			binary.LittleEndian.PutUint32(w.Resp, 8)
			copy(w.DriverOut, enc(4, 10, 1, 0x02, 1, 0x11, 1, 0x22, 1, 0x33, 1, 0x44, 1, 0x55))
		case abi.IB_USER_VERBS_CMD_REG_MR:
			copy(w.Resp, enc(4, 9, 4, 0x100, 4, 0x200))
		}
		return nil
	}
	c, err := newContext(Device{Name: "mlx5_0", Uverbs: "uverbs0", DriverID: ib.DriverMLX5}, k, InterfaceWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// GET_CONTEXT: in (8+8+32)/4=12, out (8+72)/4=20; response, then the
	// mlx5 request.
	checkWrite(t, k, "get context", append(enc(cat(hdr(0, 12, 20), []uint64{8, respPtr})...), mlx5Request(1)...))
	if c.MLX5() == nil || c.MLX5().CacheLineSize != 64 {
		t.Fatalf("mlx5 context %+v", c.MLX5())
	}

	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	// ALLOC_PD: out (4+4)/4=2, room for struct mlx5_ib_alloc_pd_resp.
	checkWrite(t, k, "alloc pd", enc(cat(hdr(3, 4, 2), []uint64{8, respPtr})...))
	if pd.Handle() != 7 || pd.PDN() != 0x1234 {
		t.Fatalf("pd handle %d pdn %#x", pd.Handle(), pd.PDN())
	}

	ah, err := pd.CreateAH(AHAttr{IsGlobal: true, DGID: ib.GID{0xfe, 0x80, 15: 1}, HopLimit: 64, Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_AH: out (4+16)/4=5, room for struct mlx5_ib_create_ah_resp.
	checkWrite(t, k, "create ah", enc(cat(hdr(5, 16, 5), []uint64{8, respPtr, 8, 0, 4, 7, 4, 0,
		1, 0xfe, 1, 0x80, 13, 0, 1, 1, 4, 0, 1, 0, 1, 64, 1, 0, 1, 0, 2, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0})...))
	if ah.MAC().String() != "02:11:22:33:44:55" {
		t.Fatalf("ah mac %v", ah.MAC())
	}

	buf := make([]byte, 4096)
	mr, err := pd.RegMR(buf, AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	// REG_MR: mlx5 takes no driver data.
	checkWrite(t, k, "reg mr", enc(cat(hdr(9, 12, 3), []uint64{8, respPtr, 8, uint64(mr.Addr()), 8, 4096, 8, uint64(mr.Addr()), 4, 7, 4, 1})...))

	for _, tc := range []struct {
		op  string
		err error
	}{
		{"create cq", func() error { _, err := c.CreateCQ(CQAttr{CQE: 16}); return err }()},
		{"create qp", func() error {
			_, err := pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: &CQ{object: object{ctx: c}}, RecvCQ: &CQ{object: object{ctx: c}}})
			return err
		}()},
		{"create srq", func() error { _, err := pd.CreateSRQ(SRQAttr{MaxWR: 4, MaxSGE: 1}); return err }()},
	} {
		var e *Error
		if !errors.Is(tc.err, ErrNotSupported) || !errors.As(tc.err, &e) || e.Op != tc.op || !strings.Contains(tc.err.Error(), "mlx5") {
			t.Errorf("%s on mlx5: %v", tc.op, tc.err)
		}
	}
	if len(k.writes) != 0 {
		t.Fatalf("refused creations sent %d writes", len(k.writes))
	}
}

// TestMLX5AHWithoutMAC: on an IB port mlx5 writes no CREATE_AH response;
// the AH then has no MAC.
func TestMLX5AHWithoutMAC(t *testing.T) {
	c, _ := driverWriteContext(t, "mlx5_0", ib.DriverMLX5, nil)
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	ah, err := pd.CreateAH(AHAttr{DLID: 3, Port: 1})
	if err != nil || ah.MAC() != nil {
		t.Fatalf("ah %v mac %v", err, ah.MAC())
	}
	if c.MLX5().ResponseLength != 0 || c.MLX5().UARSize() != os.Getpagesize() {
		t.Fatalf("empty response decoded as %+v", c.MLX5())
	}
}

func FuzzDecodeMLX5Context(f *testing.F) {
	f.Add(mlx5Response())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		a := mlx5GetContextAttempts(4096)[0]
		m := decodeMLX5Context(&a, b)
		_ = m.Mask.String() + m.CmdsSuppUHW.String() + m.EthMinInline.String() + m.FlowActionFlags.String()
		if s := m.UARSize(); s <= 0 {
			t.Fatalf("uar size %d", s)
		}
		if n := m.EthMinInlineBytes(); n != 0 && n != 18 {
			t.Fatalf("inline bytes %d", n)
		}
		if len(b) >= 72 && m.DumpFillMKey != binary.NativeEndian.Uint32(b[68:]) {
			t.Fatalf("dump_fill_mkey %#x from %x", m.DumpFillMKey, b)
		}
	})
}
