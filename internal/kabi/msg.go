package kabi

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Msg is one write(2) command in memory kabi allocated: the frame (the
// bytes write(2) sends: headers and request) and, after it, the buffer the
// frame's pointer fields point into (the response the kernel writes, or
// data it reads). The caller fills Frame and, for data the kernel reads,
// Buf; Send places the addresses and makes the call; the caller reads the
// response from Buf. A Msg may be sent again (GET_EVENT's is made once per
// channel); one Send runs at a time.
type Msg struct {
	mem   []byte // the frame, then the buffer at offset buf (8-aligned)
	frame int
	buf   int
	pins  Pins
	busy  atomic.Bool
}

// Ptr places one address: Send writes the address of Buf()[Off] into
// the u64 at Frame()[At:] (in host order, as the uapi's __u64 pointer
// fields are).
type Ptr struct {
	At  int // offset of the u64 pointer field in the frame
	Off int // offset in the buffer it points at
}

// NewMsg allocates a command of frameLen bytes followed by a buffer of
// bufLen bytes, all zero. The buffer starts 8-aligned, so a uapi struct can
// sit at its start.
func NewMsg(frameLen, bufLen int) *Msg {
	frameLen, bufLen = max(frameLen, 0), max(bufLen, 0)
	buf := (frameLen + 7) &^ 7
	words := make([]uint64, max(1, (buf+bufLen+7)/8))
	mem := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), buf+bufLen)
	return &Msg{mem: mem, frame: frameLen, buf: buf}
}

// Frame is the command as write(2) sends it, for the caller to fill.
func (m *Msg) Frame() []byte { return m.mem[:m.frame:m.frame] }

// Buf is the buffer behind the frame's pointers: the kernel's response
// after Send, or the data it reads, which the caller fills before.
func (m *Msg) Buf() []byte { return m.mem[m.buf:] }

// Send writes the command to fd, with each of ptrs placed: it pins the
// message, writes the addresses into the frame, calls write(2) through the
// scheduler's system-call path (the kernel may sleep in the command),
// retries EINTR, and unpins. The kernel's response is in Buf when it
// returns nil. The error is the bare unix.Errno of write(2), an error
// matching io.ErrShortWrite when the kernel took part of the frame, or
// one matching unix.EINVAL for a Ptr outside the message; callers name the
// operation.
func (m *Msg) Send(fd int, ptrs ...Ptr) error {
	for _, p := range ptrs {
		if p.At < 0 || p.At > m.frame-8 || p.Off < 0 || p.Off > len(m.mem)-m.buf {
			return fmt.Errorf("pointer field at %d to buffer offset %d outside a %d-byte frame and %d-byte buffer: %w",
				p.At, p.Off, m.frame, len(m.mem)-m.buf, unix.EINVAL)
		}
	}
	if !m.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("command already being sent: %w", unix.EBUSY)
	}
	defer m.busy.Store(false)
	defer m.pins.Unpin()
	base := m.pins.Pin(m.mem)
	for _, p := range ptrs {
		binary.NativeEndian.PutUint64(m.mem[p.At:], base+uint64(m.buf+p.Off))
	}
	err := m.write(fd)
	runtime.KeepAlive(m)
	return err
}

// write is the one write(2) of a command.
func (m *Msg) write(fd int) error {
	frame := m.mem[:m.frame]
	for {
		var n int
		var err error
		if h := hook.Load(); h != nil {
			n, err = (*h)(fd, frame, &m.pins)
		} else {
			n, err = unix.Write(fd, frame)
		}
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n != len(frame):
			return fmt.Errorf("write of a %d-byte command took %d: %w", len(frame), n, io.ErrShortWrite)
		}
		return nil
	}
}
