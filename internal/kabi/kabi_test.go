package kabi_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/kabi/kabitest"
)

// noFD is the fd of commands the fake kernel answers: one that bypassed
// kabi would fail with EBADF.
const noFD = -1

// hdr is the test command's frame: a command number, an output length, and
// the pointer field the kernel follows, as ucma's and uverbs' are.
type hdr struct {
	Cmd  uint32
	Out  uint32
	Resp uint64
	Tag  uint64
}

func TestBytesDecodeSizeof(t *testing.T) {
	h := hdr{Cmd: 1, Out: 2, Resp: 3, Tag: 4}
	b := kabi.Bytes(&h)
	if len(b) != 24 || binary.NativeEndian.Uint32(b) != 1 || binary.NativeEndian.Uint64(b[16:]) != 4 {
		t.Fatalf("Bytes = %x", b)
	}
	b[0] = 9
	if h.Cmd != 9 {
		t.Fatal("Bytes copied instead of aliasing")
	}
	if got := kabi.Decode[hdr](b[:4]); got != (hdr{Cmd: 9}) {
		t.Fatalf("Decode of a short buffer = %+v", got)
	}
	if got := kabi.Decode[hdr](append(bytes.Clone(b), 1, 2, 3)); got != h {
		t.Fatalf("Decode of a long buffer = %+v", got)
	}
	if kabi.Sizeof[hdr]() != 24 || kabi.Sizeof[[3]uint16]() != 6 {
		t.Fatal("Sizeof")
	}
}

func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

// TestSendPipe makes the real write(2) into a pipe and reads back what a
// kernel would have received: the frame as filled, with the pointer field
// holding the address of the message's own buffer.
func TestSendPipe(t *testing.T) {
	r, w := pipe(t)
	m := kabi.NewMsg(kabi.Sizeof[hdr](), 12)
	h := hdr{Cmd: 7, Out: 12, Tag: 0x1122334455667788}
	copy(m.Frame(), kabi.Bytes(&h))
	if err := m.Send(w, kabi.Ptr{At: 8}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 64)
	n, err := unix.Read(r, got)
	if err != nil || n != 24 {
		t.Fatalf("read %d, %v", n, err)
	}
	sent := kabi.Decode[hdr](got[:n])
	if sent.Cmd != 7 || sent.Out != 12 || sent.Tag != h.Tag {
		t.Fatalf("sent %+v", sent)
	}
	if want := uint64(uintptr(unsafe.Pointer(&m.Buf()[0]))); sent.Resp != want {
		t.Fatalf("pointer field %#x, want the buffer at %#x", sent.Resp, want)
	}
	if uintptr(sent.Resp)%8 != 0 {
		t.Fatalf("buffer at %#x is not 8-aligned", sent.Resp)
	}
	if kabi.Pinned() != 0 {
		t.Fatalf("%d ranges left pinned", kabi.Pinned())
	}
	if err := m.Send(-1); !errors.Is(err, unix.EBADF) {
		t.Fatalf("send to fd -1: %v, want EBADF", err)
	}
	if kabi.Pinned() != 0 {
		t.Fatalf("%d ranges left pinned after a failed write", kabi.Pinned())
	}
}

// TestSendFakeKernel: the fake kernel reads the frame and follows its
// pointer, both in and out, through the addresses Send wrote.
func TestSendFakeKernel(t *testing.T) {
	k := kabitest.New(t, func(c *kabitest.Call) error {
		h := kabi.Decode[hdr](c.Frame)
		switch h.Cmd {
		case 1: // the kernel writes Out bytes
			return c.CopyOut(h.Resp, bytes.Repeat([]byte{byte(h.Tag)}, int(h.Out)))
		case 2: // the kernel reads Out bytes
			b, err := c.CopyIn(h.Resp, int(h.Out))
			if err != nil {
				return err
			}
			if !bytes.Equal(b, []byte("optval")) {
				t.Errorf("kernel read %q", b)
			}
			return nil
		}
		return unix.EINVAL
	})
	m := kabi.NewMsg(kabi.Sizeof[hdr](), 5)
	h := hdr{Cmd: 1, Out: 5, Tag: 0xab}
	copy(m.Frame(), kabi.Bytes(&h))
	if err := m.Send(noFD, kabi.Ptr{At: 8}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Buf(), bytes.Repeat([]byte{0xab}, 5)) {
		t.Fatalf("response %x", m.Buf())
	}
	in := kabi.NewMsg(kabi.Sizeof[hdr](), 6)
	h = hdr{Cmd: 2, Out: 6}
	copy(in.Frame(), kabi.Bytes(&h))
	copy(in.Buf(), "optval")
	if err := in.Send(noFD, kabi.Ptr{At: 8}); err != nil {
		t.Fatal(err)
	}
	h = hdr{Cmd: 3}
	copy(in.Frame(), kabi.Bytes(&h))
	if err := in.Send(noFD); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("the kernel's errno: %v", err)
	}
	if k.Calls() != 3 {
		t.Fatalf("%d calls, want 3", k.Calls())
	}
}

// TestCallerMemoryRefused is the rule's negative: an address of memory
// the caller made (here a stack array, what ucma's frames of up to 32
// bytes were) put into the frame by hand is refused by the fake kernel,
// which touches nothing.
func TestCallerMemoryRefused(t *testing.T) {
	k := kabitest.New(t, func(c *kabitest.Call) error {
		h := kabi.Decode[hdr](c.Frame)
		return c.CopyOut(h.Resp, make([]byte, h.Out))
	})
	var resp [8]byte
	resp[0] = 0x5a
	heap := make([]byte, 8)
	for _, addr := range []uint64{
		uint64(uintptr(unsafe.Pointer(&resp[0]))),
		uint64(uintptr(unsafe.Pointer(&heap[0]))),
	} {
		m := kabi.NewMsg(kabi.Sizeof[hdr](), 0)
		h := hdr{Cmd: 1, Out: 8, Resp: addr}
		copy(m.Frame(), kabi.Bytes(&h))
		if err := m.Send(noFD); !errors.Is(err, unix.EFAULT) {
			t.Errorf("a frame pointing at caller memory: %v, want EFAULT", err)
		}
		if v := k.Violations(); len(v) != 1 {
			t.Errorf("violations %q, want one", v)
		}
	}
	if resp[0] != 0x5a {
		t.Fatal("the fake kernel wrote outside kabi's memory")
	}
	// So is a pointer past the message's buffer.
	m := kabi.NewMsg(kabi.Sizeof[hdr](), 8)
	h := hdr{Cmd: 1, Out: 9}
	copy(m.Frame(), kabi.Bytes(&h))
	if err := m.Send(noFD, kabi.Ptr{At: 8}); !errors.Is(err, unix.EFAULT) {
		t.Errorf("a response longer than the buffer: %v, want EFAULT", err)
	}
	if v := k.Violations(); len(v) != 1 {
		t.Errorf("violations %q, want one", v)
	}
}

func TestSendErrors(t *testing.T) {
	m := kabi.NewMsg(16, 8)
	for _, p := range []kabi.Ptr{{At: -1}, {At: 9}, {At: 16}, {At: 0, Off: 9}, {At: 0, Off: -1}} {
		if err := m.Send(noFD, p); !errors.Is(err, unix.EINVAL) {
			t.Errorf("%+v: %v, want EINVAL", p, err)
		}
	}
	if err := kabi.NewMsg(4, 8).Send(noFD, kabi.Ptr{}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("a pointer field in a 4-byte frame: %v, want EINVAL", err)
	}
	var calls int
	var reentered error
	restore := kabi.SetHook(func(fd int, frame []byte, pins *kabi.Pins) (int, error) {
		calls++
		switch calls {
		case 1, 2:
			return 0, unix.EINTR
		case 3:
			return len(frame) - 1, nil
		case 4:
			reentered = m.Send(fd)
			return len(frame), nil
		}
		return 0, unix.ENOSYS
	})
	defer restore()
	if err := m.Send(noFD); !errors.Is(err, io.ErrShortWrite) || calls != 3 {
		t.Fatalf("short write after two EINTRs: %v after %d calls", err, calls)
	}
	if err := m.Send(noFD); err != nil || !errors.Is(reentered, unix.EBUSY) {
		t.Fatalf("send %v, a second send of the same message meanwhile %v, want EBUSY", err, reentered)
	}
	if err := m.Send(noFD); !errors.Is(err, unix.ENOSYS) {
		t.Fatalf("send: %v, want the hook's ENOSYS", err)
	}
	if kabi.Pinned() != 0 {
		t.Fatalf("%d ranges left pinned", kabi.Pinned())
	}
}

func TestPins(t *testing.T) {
	var ps kabi.Pins
	a, b := make([]byte, 16), make([]byte, 100)
	if ps.Pin(nil) != 0 || kabi.Pinned() != 0 {
		t.Fatal("an empty slice pinned something")
	}
	pa, pb := ps.Pin(a), ps.Pin(b[10:20])
	if pa != uint64(uintptr(unsafe.Pointer(&a[0]))) || pb != uint64(uintptr(unsafe.Pointer(&b[10]))) {
		t.Fatal("Pin returned another address")
	}
	if kabi.Pinned() != 2 {
		t.Fatalf("Pinned %d, want 2", kabi.Pinned())
	}
	for _, c := range []struct {
		addr uint64
		n    int
		want bool
	}{
		{pa, 16, true}, {pa + 15, 1, true}, {pa + 16, 0, true}, {pa + 16, 1, false}, {pa - 1, 2, false},
		{pa, -1, false}, {pb, 10, true}, {pb, 11, false}, {pb - 1, 1, false}, {^uint64(0), 2, false},
	} {
		if got := ps.Covers(c.addr, c.n); got != c.want {
			t.Errorf("Covers(%#x, %d) = %v (pinned %v)", c.addr, c.n, got, &ps)
		}
	}
	ps.Unpin()
	ps.Unpin()
	if kabi.Pinned() != 0 || ps.Covers(pa, 1) {
		t.Fatalf("after Unpin: %d pinned, covers %v", kabi.Pinned(), ps.Covers(pa, 1))
	}
}

// TestSendAcrossMovingStacks sends many commands from goroutines whose
// stacks are at a different depth each time (so that calls on the way to
// write(2) grow and move them) while the GC keeps shrinking them; the
// fake kernel writes each command's response through the address in its
// frame, and each response must arrive.
func TestSendAcrossMovingStacks(t *testing.T) {
	kabitest.New(t, func(c *kabitest.Call) error {
		h := kabi.Decode[hdr](c.Frame)
		out := make([]byte, h.Out)
		for i := range out {
			out[i] = byte(h.Tag) + byte(i)
		}
		return c.CopyOut(h.Resp, out)
	})
	kabitest.CollectGarbage(t)
	const workers, calls = 8, 300
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				var err error
				kabitest.AtDepth((i*7+w)%40, func() { err = sendOne(uint64(w*calls + i)) })
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func sendOne(tag uint64) error {
	out := 1 + int(tag%29)
	m := kabi.NewMsg(kabi.Sizeof[hdr](), out)
	h := hdr{Cmd: 1, Out: uint32(out), Tag: tag}
	copy(m.Frame(), kabi.Bytes(&h))
	if err := m.Send(noFD, kabi.Ptr{At: 8}); err != nil {
		return err
	}
	for i, b := range m.Buf() {
		if b != byte(tag)+byte(i) {
			return errors.New("a response was lost")
		}
	}
	return nil
}

// TestSendAllocs: a message made once (GET_EVENT's) is sent without
// allocating.
func TestSendAllocs(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := kabi.NewMsg(16, 336)
	fd := int(f.Fd())
	if err := m.Send(fd, kabi.Ptr{At: 8}); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { m.Send(fd, kabi.Ptr{At: 8}) }); n != 0 {
		t.Fatalf("%v allocations per Send", n)
	}
}
