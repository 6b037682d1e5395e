package uverbs

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// methodAttr is one expected struct ib_uverbs_attr; data nil stands for
// a pointer, whose value differs per run.
func methodAttr(id, n, flags uint16, data []byte) string {
	s := hex.EncodeToString(enc(2, uint64(id), 2, uint64(n), 2, uint64(flags), 2, 0))
	if data == nil {
		return s + "????????????????"
	}
	return s + hex.EncodeToString(append(data, make([]byte, 8-len(data))...))
}

func methodHdr(n int, obj, method uint16) string {
	return hex.EncodeToString(enc(2, uint64(24+16*n), 2, uint64(obj), 2, uint64(method), 2, uint64(n), 8, 0, 4, 14, 4, 0))
}

func matchHex(t *testing.T, name string, got []byte, want string) {
	t.Helper()
	g := hex.EncodeToString(got)
	if len(g) != len(want) {
		t.Errorf("%s:\n got %s\nwant %s", name, g, want)
		return
	}
	for j := range want {
		if want[j] != '?' && want[j] != g[j] {
			t.Errorf("%s differs at byte %d:\n got %s\nwant %s", name, j/2, g, want)
			return
		}
	}
}

// methodContext is an ioctl rxe context on a fake kernel that answers the
// CQ, QP and SRQ methods (new handle 5, qpn/srqn 9, sizes echoed), unless
// missing names methods it lacks (EPROTONOSUPPORT).
func methodContext(t *testing.T, missing map[[2]uint16]bool) (*Context, *fakeKernel, int) {
	t.Helper()
	asyncFD := -1
	k := &fakeKernel{onWrite: func(w *abi.WriteCmd) error { return nil }}
	k.onIoctl = func(call *abi.Ioctl) error {
		om := [2]uint16{call.Object(), call.Method()}
		if missing[om] {
			return unix.EPROTONOSUPPORT
		}
		out := func(id uint16, v uint32) {
			i := call.Find(id)
			binary.LittleEndian.PutUint32(call.Buf(i), v)
			call.SetOutput(i)
		}
		switch om {
		case [2]uint16{abi.UVERBS_OBJECT_ASYNC_EVENT, 0}:
			asyncFD = testEventFD(t)
			call.SetData(0, uint64(asyncFD))
		case [2]uint16{abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_INVOKE_WRITE}:
			if call.Find(abi.UVERBS_ATTR_CORE_OUT) < 0 {
				return unix.ENOSPC
			}
			i := call.Find(abi.UVERBS_ATTR_CORE_OUT)
			binary.LittleEndian.PutUint32(call.Buf(i), 7)
			call.SetOutput(i)
		case [2]uint16{abi.UVERBS_OBJECT_CQ, abi.UVERBS_METHOD_CQ_CREATE}:
			call.SetData(call.Find(abi.UVERBS_ATTR_CREATE_CQ_HANDLE), 5)
			out(abi.UVERBS_ATTR_CREATE_CQ_RESP_CQE, 32)
		case [2]uint16{abi.UVERBS_OBJECT_QP, abi.UVERBS_METHOD_QP_CREATE}:
			call.SetData(call.Find(abi.UVERBS_ATTR_CREATE_QP_HANDLE), 5)
			i := call.Find(abi.UVERBS_ATTR_CREATE_QP_RESP_CAP)
			copy(call.Buf(i), enc(4, 4, 4, 5, 4, 1, 4, 2, 4, 64))
			call.SetOutput(i)
			out(abi.UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 9)
		case [2]uint16{abi.UVERBS_OBJECT_SRQ, abi.UVERBS_METHOD_SRQ_CREATE}:
			call.SetData(call.Find(abi.UVERBS_ATTR_CREATE_SRQ_HANDLE), 5)
			out(abi.UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, 16)
			out(abi.UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, 2)
			out(abi.UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, 9)
		}
		return nil
	}
	c, err := newContext(Device{Name: "rxe0", Uverbs: "uverbs0", DriverID: ib.DriverRXE}, k, InterfaceAuto)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	k.ioctls = nil
	return c, k, asyncFD
}

// TestMethodEncoding checks the ioctl forms of CQ, QP and SRQ creation
// and destruction byte for byte against rdma/ib_user_ioctl_cmds.h, and
// that their answers reach the objects.
func TestMethodEncoding(t *testing.T) {
	littleEndian(t)
	c, k, afd := methodContext(t, nil)
	fd := enc(8, uint64(afd))
	cq, err := c.CreateCQ(CQAttr{CQE: 16, CompVector: 1})
	if err != nil {
		t.Fatal(err)
	}
	// CQ_CREATE: the new handle, RESP_CQE, CQE 16, USER_HANDLE 1,
	// COMP_VECTOR 1, EVENT_FD (optional), UHW_OUT (rxe's 16 bytes).
	matchHex(t, "cq create", k.ioctls[0], methodHdr(7, 3, 0)+methodAttr(0, 0, 1, []byte{})+methodAttr(6, 4, 1, nil)+
		methodAttr(1, 4, 1, enc(4, 16))+methodAttr(2, 8, 1, enc(8, 1))+methodAttr(4, 4, 1, enc(4, 1))+
		methodAttr(7, 0, 0, fd)+methodAttr(0x1001, 16, 1, nil))
	if cq.Handle() != 5 || cq.CQE() != 32 {
		t.Fatalf("cq handle %d cqe %d", cq.Handle(), cq.CQE())
	}
	pd, err := c.AllocPD() // INVOKE_WRITE: PDs have no create method
	if err != nil {
		t.Fatal(err)
	}
	srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 16, MaxSGE: 2, SRQLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	// SRQ_CREATE: handle, PD 7, TYPE basic (const), USER_HANDLE 2,
	// MAX_WR, MAX_SGE, LIMIT, EVENT_FD, RESP_MAX_WR, RESP_MAX_SGE,
	// RESP_SRQ_NUM, UHW_OUT (24).
	matchHex(t, "srq create", k.ioctls[2], methodHdr(12, 5, 0)+methodAttr(0, 0, 1, []byte{})+methodAttr(1, 0, 1, enc(4, 7))+
		methodAttr(9, 8, 1, enc(8, 0))+methodAttr(4, 8, 1, enc(8, 2))+methodAttr(5, 4, 1, enc(4, 16))+methodAttr(6, 4, 1, enc(4, 2))+
		methodAttr(7, 4, 1, enc(4, 1))+methodAttr(10, 0, 0, fd)+methodAttr(11, 4, 1, nil)+methodAttr(12, 4, 1, nil)+
		methodAttr(13, 4, 1, nil)+methodAttr(0x1001, 24, 1, nil))
	if srq.Handle() != 5 || srq.Num() != 9 || srq.MaxWR() != 16 || srq.MaxSGE() != 2 {
		t.Fatalf("srq %d num %d %d/%d", srq.Handle(), srq.Num(), srq.MaxWR(), srq.MaxSGE())
	}
	qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq, SRQ: srq, SQSigAll: true,
		Cap: QPCap{MaxSendWR: 4, MaxRecvWR: 5, MaxSendSGE: 1, MaxRecvSGE: 2, MaxInlineData: 64}})
	if err != nil {
		t.Fatal(err)
	}
	// QP_CREATE: PD 7, send and recv CQ 5, the new handle, TYPE RC
	// (const 2), USER_HANDLE 3, CAP (20 bytes by pointer), EVENT_FD,
	// FLAGS SQ_SIG_ALL, SRQ 5, RESP_CAP, RESP_QP_NUM, UHW_OUT (32).
	matchHex(t, "qp create", k.ioctls[3], methodHdr(13, 4, 0)+methodAttr(2, 0, 1, enc(4, 7))+methodAttr(4, 0, 1, enc(4, 5))+
		methodAttr(5, 0, 1, enc(4, 5))+methodAttr(0, 0, 1, []byte{})+methodAttr(9, 8, 1, enc(8, 2))+methodAttr(7, 8, 1, enc(8, 3))+
		methodAttr(8, 20, 1, nil)+methodAttr(12, 0, 0, fd)+methodAttr(10, 4, 1, enc(4, 1<<12))+methodAttr(3, 0, 1, enc(4, 5))+
		methodAttr(13, 20, 1, nil)+methodAttr(14, 4, 1, nil)+methodAttr(0x1001, 32, 1, nil))
	if qp.Handle() != 5 || qp.Num() != 9 || qp.Cap() != (QPCap{4, 5, 1, 2, 64}) {
		t.Fatalf("qp %d num %d cap %+v", qp.Handle(), qp.Num(), qp.Cap())
	}
	k.ioctls = nil
	for _, cl := range []interface{ Close() error }{qp, srq, cq} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The destroys: the handle (DESTROY access), the response by pointer.
	for i, want := range []string{
		methodHdr(2, 4, 1) + methodAttr(0, 0, 1, enc(4, 5)) + methodAttr(1, 4, 1, nil),
		methodHdr(2, 5, 1) + methodAttr(0, 0, 1, enc(4, 5)) + methodAttr(1, 4, 1, nil),
		methodHdr(2, 3, 1) + methodAttr(0, 0, 1, enc(4, 5)) + methodAttr(1, 8, 1, nil),
	} {
		matchHex(t, "destroy", k.ioctls[i], want)
	}
	if len(k.writes) != 0 {
		t.Fatalf("%d write() calls", len(k.writes))
	}
}

// TestMethodFallback: a kernel without the CQ methods gets CREATE_CQ and
// DESTROY_CQ through INVOKE_WRITE, and is asked for the method once.
func TestMethodFallback(t *testing.T) {
	c, k, _ := methodContext(t, map[[2]uint16]bool{{abi.UVERBS_OBJECT_CQ, abi.UVERBS_METHOD_CQ_CREATE}: true,
		{abi.UVERBS_OBJECT_CQ, abi.UVERBS_METHOD_CQ_DESTROY}: true})
	for i := 0; i < 2; i++ {
		cq, err := c.CreateCQ(CQAttr{CQE: 8})
		if err != nil {
			t.Fatal(err)
		}
		if cq.Handle() != 7 {
			t.Fatalf("handle %d from INVOKE_WRITE", cq.Handle())
		}
		if err := cq.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var methods []uint16
	for _, b := range k.ioctls {
		methods = append(methods, binary.LittleEndian.Uint16(b[2:])<<8|binary.LittleEndian.Uint16(b[4:]))
	}
	// CQ_CREATE (3/0), INVOKE_WRITE, CQ_DESTROY (3/1), INVOKE_WRITE, then
	// INVOKE_WRITE only.
	want := []uint16{0x300, 0, 0x301, 0, 0, 0}
	if len(methods) != len(want) {
		t.Fatalf("object/method sequence %x, want %x", methods, want)
	}
	for i := range want {
		if methods[i] != want[i] {
			t.Fatalf("object/method sequence %x, want %x", methods, want)
		}
	}
	// Other errors are the command's.
	c2, _, _ := methodContext(t, nil)
	c2.k.(*fakeKernel).onIoctl = func(*abi.Ioctl) error { return unix.ENOMEM }
	if _, err := c2.CreateCQ(CQAttr{CQE: 8}); !errors.Is(err, unix.ENOMEM) {
		t.Fatalf("create cq: %v", err)
	}
}
