package uverbs

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// fakeKernel records what a Context sends and answers from handlers.
type fakeKernel struct {
	ioctls  [][]byte
	writes  [][]byte
	onIoctl func(c *abi.Ioctl) error
	onWrite func(w *abi.WriteCmd) error

	// The data path: a fake kernel with onMmap shares queues (its
	// memory must come from unix.Mmap); doorbells are counted, and the
	// last one kept (without allocating).
	onMmap       func(offset int64, length int) ([]byte, error)
	doorbells    int
	lastDoorbell [64]byte
}

func (k *fakeKernel) mmap(offset int64, length int) ([]byte, error) {
	if k.onMmap == nil {
		return nil, unix.ENODEV
	}
	return k.onMmap(offset, length)
}

func (k *fakeKernel) doorbell(cmd []byte) (int, error) {
	k.doorbells++
	copy(k.lastDoorbell[:], cmd)
	return len(cmd), nil
}

func (k *fakeKernel) queues() bool { return k.onMmap != nil }

func (k *fakeKernel) ioctl(c *abi.Ioctl, driver uint32) error {
	k.ioctls = append(k.ioctls, append([]byte(nil), c.Encoded(driver)...))
	if k.onIoctl != nil {
		return k.onIoctl(c)
	}
	return unix.ENOTTY
}

func (k *fakeKernel) write(w *abi.WriteCmd) error {
	b, err := w.Encoded(0xdeadbeef)
	if err != nil {
		return err
	}
	k.writes = append(k.writes, b)
	if k.onWrite != nil {
		return k.onWrite(w)
	}
	return nil
}

func (k *fakeKernel) close() error { return nil }

func le(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeRXEContext is an rxe0 context on a fake kernel that answers
// GET_CONTEXT (an event fd, compVectors completion vectors) and ALLOC_PD
// (handle 3) and records every command.
func fakeRXEContext(t *testing.T, compVectors byte) (*fakeKernel, *Context) {
	t.Helper()
	k := &fakeKernel{onWrite: func(w *abi.WriteCmd) error {
		switch w.Command {
		case abi.IB_USER_VERBS_CMD_GET_CONTEXT:
			fd := testEventFD(t)
			copy(w.Resp, []byte{byte(fd), byte(fd >> 8), 0, 0, compVectors, 0, 0, 0})
		case abi.IB_USER_VERBS_CMD_ALLOC_PD:
			copy(w.Resp, []byte{3, 0, 0, 0})
		}
		return nil
	}}
	c, err := newContext(Device{Name: "rxe0", Uverbs: "uverbs0", DriverID: ib.DriverRXE}, k, InterfaceWrite)
	if err != nil {
		t.Fatal(err)
	}
	return k, c
}

// TestWriteEncoding checks write() commands byte for byte against the
// layouts of rdma/ib_user_verbs.h (host order is little-endian here).
func TestWriteEncoding(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
	k, c := fakeRXEContext(t, 2)
	defer c.Close()
	if c.NumCompVectors() != 2 {
		t.Fatalf("num_comp_vectors %d", c.NumCompVectors())
	}
	pd, err := c.AllocPD()
	if err != nil || pd.Handle() != 3 {
		t.Fatalf("pd %v, %v", pd, err)
	}
	if err := pd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateCQ(CQAttr{CQE: 16, CompVector: 1}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		// GET_CONTEXT: cmd 0, in_words 4 (8+8), out_words 2, response.
		"00000000" + "0400" + "0200" + "efbeadde00000000",
		// ALLOC_PD: cmd 3, in 4, out 1.
		"03000000" + "0400" + "0100" + "efbeadde00000000",
		// DEALLOC_PD: cmd 4, in 3, out 0, pd_handle 3.
		"04000000" + "0300" + "0000" + "03000000",
		// CREATE_CQ: cmd 18, in (8+32)/4=10, out (8+16 rxe)/4=6;
		// user_handle 1, cqe 16, comp_vector 1, comp_channel -1.
		"12000000" + "0a00" + "0600" + "efbeadde00000000" + "0100000000000000" + "10000000" + "01000000" + "ffffffff" + "00000000",
	}
	if len(k.writes) != len(want) {
		t.Fatalf("%d writes, want %d", len(k.writes), len(want))
	}
	for i, w := range want {
		if !bytes.Equal(k.writes[i], le(t, w)) {
			t.Errorf("write %d:\n got %x\nwant %s", i, k.writes[i], w)
		}
	}
}

// TestIoctlEncoding checks RDMA_VERBS_IOCTL calls byte for byte against
// rdma/rdma_user_ioctl_cmds.h and ib_user_ioctl_cmds.h.
func TestIoctlEncoding(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
	k := &fakeKernel{}
	k.onIoctl = func(call *abi.Ioctl) error {
		switch {
		case call.Object() == abi.UVERBS_OBJECT_DEVICE && call.Method() == abi.UVERBS_METHOD_GET_CONTEXT:
			i := call.Find(abi.UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS)
			copy(call.Buf(i), []byte{4, 0, 0, 0})
			call.SetOutput(i)
			return nil
		case call.Object() == abi.UVERBS_OBJECT_ASYNC_EVENT:
			call.SetData(0, uint64(testEventFD(t)))
			return nil
		case call.Method() == abi.UVERBS_METHOD_INVOKE_WRITE:
			return unix.ENOSPC
		}
		return nil
	}
	c, err := newContext(Device{Name: "siw0", Uverbs: "uverbs0", DriverID: ib.DriverSIW}, k, InterfaceAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.UsesIoctl() || !c.invokeWrite || c.NumCompVectors() != 4 {
		t.Fatalf("ioctl %v invoke %v ncv %d", c.UsesIoctl(), c.invokeWrite, c.NumCompVectors())
	}
	if _, err := c.QueryPort(1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.QueryGID(1, 2); err != nil {
		t.Fatal(err)
	}
	// Header: length, object, method, num_attrs, reserved1, driver_id 18 (siw), reserved2.
	hdr := func(n int, obj, method uint16) string {
		b := make([]byte, 24)
		binary.LittleEndian.PutUint16(b[0:], uint16(24+16*n))
		binary.LittleEndian.PutUint16(b[2:], obj)
		binary.LittleEndian.PutUint16(b[4:], method)
		binary.LittleEndian.PutUint16(b[6:], uint16(n))
		binary.LittleEndian.PutUint32(b[16:], 18)
		return hex.EncodeToString(b)
	}
	ptr := "????????????????" // pointers differ per run
	want := []string{
		// GET_CONTEXT: NUM_COMP_VECTORS out (4), CORE_SUPPORT out (8), UHW_OUT (8 for siw).
		hdr(3, 0, 3) + "0000" + "0400" + "0100" + "0000" + ptr + "0100" + "0800" + "0100" + "0000" + ptr + "0110" + "0800" + "0100" + "0000" + ptr,
		// ASYNC_EVENT_ALLOC: the new fd attribute.
		hdr(1, 16, 0) + "0000" + "0000" + "0100" + "0000" + "0000000000000000",
		// INVOKE_WRITE probe: WRITE_CMD = QUERY_DEVICE, const.
		hdr(1, 0, 0) + "0200" + "0800" + "0100" + "0000" + "0100000000000000",
		// QUERY_PORT: port 1 const, 48-byte response.
		hdr(2, 0, 2) + "0000" + "0800" + "0100" + "0000" + "0100000000000000" + "0100" + "3000" + "0100" + "0000" + ptr,
		// QUERY_GID_ENTRY: port 1, index 2, flags 0 (4 bytes inline), 32-byte entry.
		hdr(4, 0, 6) + "0000" + "0800" + "0100" + "0000" + "0100000000000000" + "0100" + "0800" + "0100" + "0000" + "0200000000000000" +
			"0200" + "0400" + "0100" + "0000" + "0000000000000000" + "0300" + "2000" + "0100" + "0000" + ptr,
	}
	if len(k.ioctls) != len(want) {
		t.Fatalf("%d ioctls, want %d", len(k.ioctls), len(want))
	}
	for i, w := range want {
		got := hex.EncodeToString(k.ioctls[i])
		if len(got) != len(w) {
			t.Errorf("ioctl %d: %s, want %s", i, got, w)
			continue
		}
		for j := range w {
			if w[j] != '?' && w[j] != got[j] {
				t.Errorf("ioctl %d differs at byte %d:\n got %s\nwant %s", i, j/2, got, w)
				break
			}
		}
	}
}

func FuzzDecodeDeviceAttr(f *testing.F) {
	addFixtureSeeds(f, "query_device_ex.hex")
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := kabi.Decode[abi.ExQueryDeviceResp](b)
		a := decodeDeviceAttr(&r)
		_ = a.Caps.String() + a.CapsEx.String() + a.AtomicCap.String() + a.ODP.RC.String() + a.FirmwareString(ib.DriverMLX5)
	})
}

func FuzzDecodePortAttr(f *testing.F) {
	addFixtureSeeds(f, "query_port_ex.hex")
	f.Fuzz(func(t *testing.T, b []byte) {
		r := kabi.Decode[abi.QueryPortRespEx](b)
		p := decodePortAttr(&r)
		_ = p.ActiveSpeed.String() + p.ActiveWidth.String() + p.LinkLayer.String() + p.Caps.String()
	})
}

func FuzzDecodeGIDEntries(f *testing.F) {
	addFixtureSeeds(f, "gid_table.hex")
	f.Fuzz(func(t *testing.T, b []byte) {
		es := decodeGIDEntries(b)
		if len(es) != len(b)/32 {
			t.Fatalf("%d entries from %d bytes", len(es), len(b))
		}
		for _, e := range es {
			_ = e.GID.String() + e.Type.String()
		}
	})
}

func FuzzDecodeQPAttr(f *testing.F) {
	f.Add(make([]byte, 128))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := kabi.Decode[abi.QueryQpResp](b)
		_ = decodeQPAttr(&r).State.String()
	})
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &Context{objects: map[uint64]any{1: &QP{}, 2: &CQ{}, 3: &SRQ{}}}
		ev := c.decodeEvent(kabi.Decode[abi.AsyncEventDesc](b))
		_ = ev.Type.String()
	})
}

func FuzzParseSysfsGID(f *testing.F) {
	f.Add("fe80:0000:0000:0000:5054:00ff:fe12:3456")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := parseSysfsGID(s)
		if err != nil {
			return
		}
		if g2, err := ib.ParseGID(g.String()); err != nil || g2 != g {
			t.Fatalf("round trip of %q: %v %v", s, g2, err)
		}
	})
}

func TestErrors(t *testing.T) {
	err := wrap("rxe0", "create cq", unix.EIO)
	if errIs(err, ErrDeviceRemoved) || !errIs(err, unix.EIO) {
		t.Fatalf("%v: want EIO, and ErrDeviceRemoved only for a device that is gone (errors_test.go)", err)
	}
	if errIs(wrap("rxe0", "x", unix.EINVAL), ErrDeviceRemoved) {
		t.Fatal("EINVAL matches ErrDeviceRemoved")
	}
	if !errIs(wrap("", "x", unix.EPROTONOSUPPORT), ErrNotSupported) {
		t.Fatal("EPROTONOSUPPORT does not match ErrNotSupported")
	}
	if got := err.Error(); got != "uverbs: rxe0: create cq: input/output error" {
		t.Fatalf("Error() = %q", got)
	}
}

// testEventFD is an fd standing in for the kernel's event fds; the
// context that receives it closes it.
func testEventFD(t *testing.T) int {
	t.Helper()
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}
