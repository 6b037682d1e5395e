package membuf

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
)

// Buffer is page-aligned memory from an anonymous private mapping.
type Buffer struct {
	mu     sync.Mutex
	mem    []byte
	size   int
	mrs    int // live memory regions over the buffer
	closed bool
}

// ErrBusy is matched by Close's error while memory regions cover the
// buffer.
var ErrBusy = fmt.Errorf("memory regions still cover the buffer: %w", unix.EBUSY)

// New maps size bytes (rounded up to whole pages), zero-filled.
func New(size int) (*Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("membuf: size %d: %w", size, unix.EINVAL)
	}
	ps := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, (size+ps-1)/ps*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("membuf: map %d bytes: %w", size, err)
	}
	return &Buffer{mem: mem, size: size}, nil
}

// Bytes is the buffer's memory (size bytes), nil once closed. Slices of
// it must not be used after Close.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	return b.mem[:b.size:b.size]
}

// Len is the buffer's size.
func (b *Buffer) Len() int { return b.size }

// Addr is the address of byte off, as work requests name it.
func (b *Buffer) Addr(off int) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b.mem)))) + uint64(off)
}

// MR is a memory region over (part of) a Buffer.
type MR struct {
	*uverbs.MR
	buf  *Buffer
	mu   sync.Mutex
	done bool
}

// Register registers the whole buffer in pd.
func (b *Buffer) Register(pd *uverbs.PD, access uverbs.Access) (*MR, error) {
	return b.RegisterRange(pd, 0, b.size, access)
}

// RegisterRange registers length bytes from offset off in pd.
func (b *Buffer) RegisterRange(pd *uverbs.PD, off, length int, access uverbs.Access) (*MR, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("membuf: register: %w", os.ErrClosed)
	}
	if off < 0 || length <= 0 || off+length > b.size || off+length < off {
		return nil, fmt.Errorf("membuf: register [%d, %d+%d) of a %d-byte buffer: %w", off, off, length, b.size, unix.EINVAL)
	}
	mr, err := pd.RegMR(b.mem[off:off+length], access)
	if err != nil {
		return nil, err
	}
	b.mrs++
	return &MR{MR: mr, buf: b}, nil
}

// Close deregisters the region; the buffer can then be closed. Safe to
// call more than once.
func (m *MR) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return nil
	}
	if err := m.MR.Close(); err != nil {
		return err // a later Close retries
	}
	m.done = true
	m.buf.mu.Lock()
	m.buf.mrs--
	m.buf.mu.Unlock()
	return nil
}

// Close unmaps the buffer. While memory regions cover it the error
// matches ErrBusy and the buffer stays. Safe to call more than once.
func (b *Buffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	if b.mrs > 0 {
		return fmt.Errorf("membuf: close: %d: %w", b.mrs, ErrBusy)
	}
	b.closed = true
	return unix.Munmap(b.mem)
}
