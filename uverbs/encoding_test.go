package uverbs

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// enc builds little-endian bytes from (size, value) pairs: the expected
// layouts, written from the offsets of rdma/ib_user_verbs.h.
func enc(fields ...uint64) []byte {
	var b []byte
	for i := 0; i+1 < len(fields); i += 2 {
		switch fields[i] {
		case 1:
			b = append(b, byte(fields[i+1]))
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(fields[i+1]))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(fields[i+1]))
		case 8:
			b = binary.LittleEndian.AppendUint64(b, fields[i+1])
		default: // n zero bytes
			b = append(b, make([]byte, fields[i])...)
		}
	}
	return b
}

// respPtr is the response pointer the fake framing uses.
const respPtr = 0xdeadbeef

// writeContext returns a write()-interface rxe context on a fake kernel
// whose handler answers every command with handle 7 (and qpn/srqn 9).
func writeContext(t *testing.T) (*Context, *fakeKernel) {
	t.Helper()
	k := &fakeKernel{}
	k.onWrite = func(w *abi.WriteCmd) error {
		switch w.Command & 0xff {
		case abi.IB_USER_VERBS_CMD_GET_CONTEXT:
			binary.LittleEndian.PutUint32(w.Resp, uint32(testEventFD(t)))
		case abi.IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL:
			binary.LittleEndian.PutUint32(w.Resp, uint32(testEventFD(t)))
		default:
			if len(w.Resp) >= 8 {
				binary.LittleEndian.PutUint32(w.Resp, 7)
				binary.LittleEndian.PutUint32(w.Resp[4:], 9)
			} else if len(w.Resp) >= 4 {
				binary.LittleEndian.PutUint32(w.Resp, 7)
			}
		}
		return nil
	}
	c, err := newContext(Device{Name: "rxe0", Uverbs: "uverbs0", DriverID: ib.DriverRXE}, k, InterfaceWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	k.writes = nil
	return c, k
}

func checkWrite(t *testing.T, k *fakeKernel, name string, want []byte) {
	t.Helper()
	if len(k.writes) == 0 {
		t.Fatalf("%s: nothing written", name)
	}
	got := k.writes[0]
	k.writes = k.writes[1:]
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", name, hex.EncodeToString(got), hex.EncodeToString(want))
	}
}

// hdr is struct ib_uverbs_cmd_hdr.
func hdr(cmd, in, out uint64) []uint64 { return []uint64{4, cmd, 2, in, 2, out} }

func cat(parts ...[]uint64) []uint64 {
	var out []uint64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestEveryWriteCommandEncoding runs every write() command the package
// sends and checks its bytes against the header layouts.
func TestEveryWriteCommandEncoding(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
	c, k := writeContext(t)

	if _, err := c.QueryDevice(); err != nil {
		t.Fatal(err)
	}
	// QUERY_DEVICE_EX: cmd 1|ext, in_words 1 (8 bytes), out_words 38
	// (304 bytes); ex header: response, provider words 0; comp_mask 0.
	checkWrite(t, k, "query device ex", enc(cat(hdr(0x80000001, 1, 38), []uint64{8, respPtr, 2, 0, 2, 0, 4, 0, 4, 0, 4, 0})...))

	if _, err := c.QueryPort(1); err != nil {
		t.Fatal(err)
	}
	// QUERY_PORT: in (8+16)/4=6, out 40/4=10; response, port_num 1.
	checkWrite(t, k, "query port", enc(cat(hdr(2, 6, 10), []uint64{8, respPtr, 1, 1, 7, 0})...))

	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	checkWrite(t, k, "alloc pd", enc(cat(hdr(3, 4, 1), []uint64{8, respPtr})...))

	buf := make([]byte, 4096)
	mr, err := pd.RegMR(buf, AccessLocalWrite|AccessRemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	// REG_MR: in (8+40)/4=12, out 12/4=3; start, length, hca_va, pd 7, access 5.
	checkWrite(t, k, "reg mr", enc(cat(hdr(9, 12, 3), []uint64{8, respPtr, 8, uint64(mr.Addr()), 8, 4096, 8, uint64(mr.Addr()), 4, 7, 4, 5})...))

	ch, err := c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	checkWrite(t, k, "create comp channel", enc(cat(hdr(17, 4, 1), []uint64{8, respPtr})...))

	cq, err := c.CreateCQ(CQAttr{CQE: 32, CompVector: 0, CompChannel: ch})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_CQ: in 10, out (8+16)/4=6; user_handle 1, cqe 32, vector 0, channel fd.
	checkWrite(t, k, "create cq", enc(cat(hdr(18, 10, 6), []uint64{8, respPtr, 8, 1, 4, 32, 4, 0, 4, uint64(ch.FD()), 4, 0})...))

	srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 16, MaxSGE: 2, SRQLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_SRQ: in (8+32)/4=10, out (16+24)/4=10; user_handle 2, pd 7.
	checkWrite(t, k, "create srq", enc(cat(hdr(32, 10, 10), []uint64{8, respPtr, 8, 2, 4, 7, 4, 16, 4, 2, 4, 3})...))

	if _, err := srq.Query(); err != nil {
		t.Fatal(err)
	}
	checkWrite(t, k, "query srq", enc(cat(hdr(34, 6, 4), []uint64{8, respPtr, 4, 7, 4, 0})...))

	qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeUD, SendCQ: cq, RecvCQ: cq, SRQ: srq, SQSigAll: true,
		Cap: QPCap{MaxSendWR: 4, MaxRecvWR: 5, MaxSendSGE: 1, MaxRecvSGE: 2, MaxInlineData: 64}})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_QP: in (8+56)/4=16, out (32+32)/4=16; user_handle 3, pd 7,
	// send cq 7, recv cq 7, srq 7, caps, sq_sig_all 1, type UD 4, is_srq 1.
	checkWrite(t, k, "create qp", enc(cat(hdr(24, 16, 16), []uint64{8, respPtr, 8, 3, 4, 7, 4, 7, 4, 7, 4, 7,
		4, 4, 4, 5, 4, 1, 4, 2, 4, 64, 1, 1, 1, 4, 1, 1, 1, 0})...))
	if qp.Num() != 9 {
		t.Fatalf("qpn %d", qp.Num())
	}

	dgid := ib.GID{0xfe, 0x80, 15: 1}
	err = qp.Modify(&QPAttr{State: ib.QPStateRTR, PathMTU: ib.MTU1024, DestQPN: 0x123, RQPSN: 0x456, QKey: 0x11,
		AH: AHAttr{IsGlobal: true, DGID: dgid, FlowLabel: 5, SGIDIndex: 1, HopLimit: 64, TrafficClass: 2, SL: 3, Port: 1}},
		QPAttrState|QPAttrAV|QPAttrPathMTU|QPAttrDestQPN|QPAttrRQPSN)
	if err != nil {
		t.Fatal(err)
	}
	// MODIFY_QP: 112 bytes, in (8+112)/4=30, out 0. ib_uverbs_qp_dest:
	// dgid, flow_label, dlid, reserved, sgid_index, hop_limit,
	// traffic_class, sl, src_path_bits, static_rate, is_global, port_num.
	dest := []uint64{1, 0xfe, 1, 0x80, 13, 0, 1, 1, 4, 5, 2, 0, 2, 0, 1, 1, 1, 64, 1, 2, 1, 3, 1, 0, 1, 0, 1, 1, 1, 1}
	checkWrite(t, k, "modify qp", enc(cat(hdr(26, 30, 0), dest, []uint64{32, 0},
		[]uint64{4, 7, 4, 0x101181, 4, 0x11, 4, 0x456, 4, 0, 4, 0x123, 4, 0, 2, 0, 2, 0,
			1, 2, 1, 0, 1, 3, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 0})...))

	if _, err := qp.Query(QPAttrState | QPAttrAV); err != nil {
		t.Fatal(err)
	}
	checkWrite(t, k, "query qp", enc(cat(hdr(25, 6, 32), []uint64{8, respPtr, 4, 7, 4, 0x81})...))

	ah, err := pd.CreateAH(AHAttr{IsGlobal: true, DGID: dgid, FlowLabel: 5, SGIDIndex: 1, HopLimit: 64, TrafficClass: 2, DLID: 0x10, SL: 3, Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_AH: in (8+56)/4=16, out (4+8)/4=3; user_handle 0, pd 7,
	// ib_uverbs_ah_attr: grh (dgid, flow_label, sgid_index, hop_limit,
	// traffic_class, reserved), dlid, sl, src_path_bits, static_rate,
	// is_global, port_num, reserved.
	checkWrite(t, k, "create ah", enc(cat(hdr(5, 16, 3), []uint64{8, respPtr, 8, 0, 4, 7, 4, 0,
		1, 0xfe, 1, 0x80, 13, 0, 1, 1, 4, 5, 1, 1, 1, 64, 1, 2, 1, 0, 2, 0x10, 1, 3, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0})...))

	for _, step := range []struct {
		name string
		cl   interface{ Close() error }
		want []byte
	}{
		{"destroy ah", ah, enc(cat(hdr(8, 3, 0), []uint64{4, 7})...)},
		{"destroy qp", qp, enc(cat(hdr(27, 6, 1), []uint64{8, respPtr, 4, 7, 4, 0})...)},
		{"destroy srq", srq, enc(cat(hdr(35, 6, 1), []uint64{8, respPtr, 4, 7, 4, 0})...)},
		{"destroy cq", cq, enc(cat(hdr(20, 6, 2), []uint64{8, respPtr, 4, 7, 4, 0})...)},
		{"dereg mr", mr, enc(cat(hdr(13, 3, 0), []uint64{4, 7})...)},
		{"dealloc pd", pd, enc(cat(hdr(4, 3, 0), []uint64{4, 7})...)},
	} {
		if err := step.cl.Close(); err != nil {
			t.Fatal(err)
		}
		checkWrite(t, k, step.name, step.want)
		if err := step.cl.Close(); err != nil || len(k.writes) != 0 {
			t.Fatalf("second %s: %v, %d writes", step.name, err, len(k.writes))
		}
	}
	ch.Close()
}

// TestQueryDeviceFallback checks that a kernel without the extended
// QUERY_DEVICE gets the base one.
func TestQueryDeviceFallback(t *testing.T) {
	c, k := writeContext(t)
	k.onWrite = func(w *abi.WriteCmd) error {
		if w.Extended() {
			return unix.EOPNOTSUPP
		}
		w.Resp[171] = 2 // phys_port_cnt
		return nil
	}
	a, err := c.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	if a.PhysPortCount != 2 || a.Extended != 0 || len(k.writes) != 2 {
		t.Fatalf("fallback: %+v after %d writes", a, len(k.writes))
	}
	checkWrite(t, k, "query device ex", k.writes[0])
	checkWrite(t, k, "query device", enc(cat(hdr(1, 4, 44), []uint64{8, respPtr})...))
}

// TestInvokeWriteEncoding checks how a write() command travels through
// UVERBS_METHOD_INVOKE_WRITE.
func TestInvokeWriteEncoding(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
	k := &fakeKernel{}
	k.onIoctl = func(call *abi.Ioctl) error {
		switch {
		case call.Object() == abi.UVERBS_OBJECT_ASYNC_EVENT:
			call.SetData(0, uint64(testEventFD(t)))
		case call.Method() == abi.UVERBS_METHOD_INVOKE_WRITE && call.Find(abi.UVERBS_ATTR_CORE_OUT) < 0 && call.Find(abi.UVERBS_ATTR_CORE_IN) < 0:
			return unix.ENOSPC
		case call.Method() == abi.UVERBS_METHOD_INVOKE_WRITE:
			i := call.Find(abi.UVERBS_ATTR_CORE_OUT)
			binary.LittleEndian.PutUint32(call.Buf(i), 7)
			call.SetOutput(i)
		}
		return nil
	}
	c, err := newContext(Device{Name: "rxe0", Uverbs: "uverbs0", DriverID: ib.DriverRXE}, k, InterfaceAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k.ioctls = nil
	pd, err := c.AllocPD()
	if err != nil || pd.Handle() != 7 {
		t.Fatalf("pd %v, %v", pd, err)
	}
	got := k.ioctls[0]
	// Header: 24+3*16 bytes, DEVICE/INVOKE_WRITE, 3 attrs, driver 14.
	want := enc(2, 72, 2, 0, 2, 0, 2, 3, 8, 0, 4, 14, 4, 0,
		// CORE_IN: the 8-byte request (response slot, zero) inline.
		2, 0, 2, 8, 2, 1, 2, 0, 8, 0,
		// CORE_OUT: 4 bytes by pointer.
		2, 1, 2, 4, 2, 1, 2, 0)
	if !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("invoke write:\n got %x\nwant %x", got[:len(want)], want)
	}
	// WRITE_CMD: const 3 (ALLOC_PD).
	if tail := enc(2, 2, 2, 8, 2, 1, 2, 0, 8, 3); !bytes.Equal(got[56:], tail) {
		t.Fatalf("write cmd attribute %x, want %x", got[56:], tail)
	}
}

// TestNoIoctlFallback: a kernel without the ioctl framework (ENOTTY)
// gets write() commands only.
func TestNoIoctlFallback(t *testing.T) {
	k := &fakeKernel{onWrite: func(w *abi.WriteCmd) error {
		if w.Command == abi.IB_USER_VERBS_CMD_GET_CONTEXT {
			binary.LittleEndian.PutUint32(w.Resp, uint32(testEventFD(t)))
		}
		return nil
	}}
	c, err := newContext(Device{Name: "rxe0", Uverbs: "uverbs0", DriverID: ib.DriverRXE}, k, InterfaceAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.UsesIoctl() || len(k.ioctls) != 1 || len(k.writes) != 1 {
		t.Fatalf("ioctl %v after %d ioctls and %d writes", c.UsesIoctl(), len(k.ioctls), len(k.writes))
	}
	if _, err := c.QueryPort(1); err != nil || len(k.ioctls) != 1 || len(k.writes) != 2 {
		t.Fatalf("query port went through ioctl: %v", err)
	}
	if _, _, err := c.QueryContext(); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("QueryContext without ioctl: %v", err)
	}
	// Any other ioctl error is the open's error.
	k2 := &fakeKernel{onIoctl: func(*abi.Ioctl) error { return unix.EINVAL }}
	if _, err := newContext(Device{Name: "mlx5_0", Uverbs: "uverbs0", DriverID: ib.DriverMLX5}, k2, InterfaceAuto); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("GET_CONTEXT refused: %v", err)
	}
}
