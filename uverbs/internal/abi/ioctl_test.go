package abi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

func TestIoctlAttributes(t *testing.T) {
	c := NewIoctl(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY)
	small := []byte{1, 2, 3}
	big := make([]byte, 9)
	out := make([]byte, 4)
	iSmall := c.In(1, small)
	iBig := c.In(2, big)
	iOut := c.Out(3, out)
	iConst := c.Const(4, 0x1122334455667788)
	c.Optional()
	iEnum := c.Enum(5, 3, []byte{9})
	iH := c.Handle(6, 42)
	iFD := c.FD(7, -1)
	b := c.Encoded(14)
	if len(b) != 24+7*16 || c.Len() != 7 {
		t.Fatalf("encoded %d bytes, %d attrs", len(b), c.Len())
	}
	h := kabi.Decode[IoctlHdr](b)
	if h.Length != uint16(len(b)) || h.ObjectID != 0 || h.MethodID != 6 || h.NumAttrs != 7 || h.DriverID != 14 {
		t.Fatalf("header %+v", h)
	}
	a := c.Attr(iSmall)
	if a.Len != 3 || a.Flags != UVERBS_ATTR_F_MANDATORY || !bytes.Equal(b[24+8:24+11], small) || c.Buf(iSmall) != nil {
		t.Errorf("inline attribute %+v, bytes %x", a, b[24:40])
	}
	if a := c.Attr(iBig); a.Len != 9 || a.Data != uint64(uintptr(unsafe.Pointer(&big[0]))) {
		t.Errorf("pointer attribute %+v", a)
	}
	if a := c.Attr(iOut); a.Len != 4 || a.Data != uint64(uintptr(unsafe.Pointer(&out[0]))) || c.Valid(iOut) {
		t.Errorf("output attribute %+v", a)
	}
	if a := c.Attr(iConst); a.Len != 8 || a.Data != 0x1122334455667788 || a.Flags != 0 {
		t.Errorf("optional const attribute %+v", a)
	}
	if a := c.Attr(iEnum); binary.LittleEndian.Uint16(b[24+16*iEnum+6:]) != 3 || a.Len != 1 {
		t.Errorf("enum attribute %+v", a)
	}
	if a := c.Attr(iH); a.Len != 0 || a.Data != 42 {
		t.Errorf("handle attribute %+v", a)
	}
	if a := c.Attr(iFD); int64(a.Data) != -1 {
		t.Errorf("fd attribute %+v", a)
	}
	c.SetOutput(iOut)
	if !c.Valid(iOut) || c.Valid(99) || c.Data(-1) != 0 || c.Find(5) != iEnum || c.Find(77) != -1 {
		t.Error("accessors")
	}
}

func TestIoctlLimits(t *testing.T) {
	c := NewIoctl(0, 0)
	for i := 0; i < MaxAttrs+1; i++ {
		c.Const(uint16(i), 0)
	}
	if err := c.Do(-1, 0); !errors.Is(err, unix.E2BIG) {
		t.Fatalf("too many attributes: %v", err)
	}
	c = NewIoctl(0, 0)
	c.Out(0, make([]byte, 0x10000))
	if err := c.Do(-1, 0); !errors.Is(err, unix.E2BIG) {
		t.Fatalf("65536-byte attribute: %v", err)
	}
}

// TestIoctlDo makes the real syscall on a file that is not a uverbs
// device: the kernel answers ENOTTY, the signal to fall back to write().
func TestIoctlDo(t *testing.T) {
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	c := NewIoctl(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT)
	c.Const(0, 1)
	c.Out(1, make([]byte, 48))
	if err := c.Do(int(f.Fd()), 14); !errors.Is(err, unix.ENOTTY) {
		t.Fatalf("ioctl on /dev/null: %v, want ENOTTY", err)
	}
}

func TestWriteFraming(t *testing.T) {
	// Extended: headers, then request and driver data in 8-byte words.
	w := &WriteCmd{Command: IB_USER_VERBS_EX_CMD_QUERY_DEVICE | IB_USER_VERBS_CMD_FLAG_EXTENDED,
		Req: make([]byte, 8), DriverIn: make([]byte, 16), Resp: make([]byte, 304), DriverOut: make([]byte, 8)}
	b, err := w.Encoded(0x1000)
	if err != nil {
		t.Fatal(err)
	}
	h, ex := kabi.Decode[CmdHdr](b), kabi.Decode[ExCmdHdr](b[8:])
	if len(b) != 8+16+8+16 || h.InWords != 1 || h.OutWords != 38 || ex.Response != 0x1000 || ex.ProviderInWords != 2 || ex.ProviderOutWords != 1 {
		t.Fatalf("extended framing %d bytes, %+v %+v", len(b), h, ex)
	}
	// Plain commands count 4-byte words, headers included on input.
	w = &WriteCmd{Command: IB_USER_VERBS_CMD_ALLOC_PD, Req: make([]byte, 8), DriverIn: make([]byte, 4), Resp: make([]byte, 4), DriverOut: make([]byte, 8)}
	if b, err = w.Encoded(0x2000); err != nil {
		t.Fatal(err)
	}
	h = kabi.Decode[CmdHdr](b)
	if h.InWords != 5 || h.OutWords != 3 || binary.NativeEndian.Uint64(b[8:]) != 0x2000 {
		t.Fatalf("plain framing %+v %x", h, b)
	}
	for _, bad := range []*WriteCmd{
		{Command: IB_USER_VERBS_CMD_FLAG_EXTENDED | 1, Req: make([]byte, 4)},
		{Command: 3, Req: make([]byte, 6)},
		{Command: 3, Req: make([]byte, 4), Resp: make([]byte, 4)},
	} {
		if _, err := bad.Encoded(0); !errors.Is(err, unix.EINVAL) {
			t.Errorf("%+v: %v, want EINVAL", bad, err)
		}
	}
}

// TestWriteSyscall sends a command into a pipe and reads back what the
// kernel would have received, response pointer included.
func TestWriteSyscall(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	resp := make([]byte, 4)
	w := &WriteCmd{Command: IB_USER_VERBS_CMD_ALLOC_PD, Req: make([]byte, 8), Resp: resp}
	if err := Write(p[1], w); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 64)
	n, err := unix.Read(p[0], got)
	if err != nil || n != 16 {
		t.Fatalf("read %d, %v", n, err)
	}
	if h := kabi.Decode[CmdHdr](got); h.Command != 3 || h.InWords != 4 || h.OutWords != 1 {
		t.Fatalf("header %+v", h)
	}
	if binary.NativeEndian.Uint64(got[8:]) == 0 {
		t.Fatal("response pointer is zero")
	}
	if err := Write(-1, w); !errors.Is(err, unix.EBADF) {
		t.Fatalf("write to fd -1: %v", err)
	}
}
