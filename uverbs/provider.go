package uverbs

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// The data path is the driver's: each driver with user-space queues has a
// provider here (as libibverbs has one per driver, reached through the
// context's ops), and CQ, QP and SRQ dispatch their data-path verbs to
// the provider object made when they were created. rxe is the only
// provider so far (rxe_*.go).
//
// The hot verbs (PostSend, PostRecv, Poll) dispatch with a type switch on
// the provider's concrete type rather than through an interface method:
// a work request passed to an interface method escapes to the heap, and a
// type switch keeps PostSend and Poll free of allocations.

// provider makes the data-path half of the objects of one driver.
type provider interface {
	newCQ(cq *CQ) (cqOps, error)
	newQP(qp *QP, drv []byte) (qpOps, error)
	newSRQ(srq *SRQ) (srqOps, error)
}

// The providers' objects implement the interfaces.
var (
	_ cqOps  = (*rxeCQ)(nil)
	_ qpOps  = (*rxeQP)(nil)
	_ srqOps = (*rxeSRQ)(nil)
)

// cqOps, qpOps and srqOps are the cold verbs of a provider's objects;
// release unmaps what the provider mapped, once the kernel object is
// gone.
type cqOps interface {
	requestNotify(solicitedOnly bool) error
	// produced counts the completions the driver has written (modulo
	// 2^32); it only has to change when one is written.
	produced() uint32
	resized() error // the kernel moved the queue (its new cookie is in the driver data)
	release() error
}

type qpOps interface {
	maxInline() int
	release() error
}

type srqOps interface {
	resized() error
	release() error
}

// providerFor returns the provider of a driver, nil for none.
func providerFor(d ib.DriverID) provider {
	switch d {
	case ib.DriverRXE:
		return rxeProvider{}
	}
	return nil
}

// ErrNoProvider is matched by the error of creating a CQ, QP or SRQ on a
// device whose driver has no data-path provider in this package; the
// error names the driver. It matches ErrNotSupported.
var ErrNoProvider = fmt.Errorf("no data-path provider for the driver: %w", ErrNotSupported)

// dataPath returns the provider for a new CQ, QP or SRQ (what), nil for a
// context without a char device (the tests' fake kernels: control path
// only). A driver without a provider is refused before anything is sent.
func (c *Context) dataPath(op, what string) (provider, error) {
	if err := c.needsProviderBuffers(op, what); err != nil {
		return nil, err
	}
	if _, ok := c.fd(); !ok {
		return nil, nil
	}
	p := providerFor(c.dev.DriverID)
	if p == nil {
		return nil, wrap(c.dev.Name, op, fmt.Errorf("%s: driver %v: %w", what, c.dev.DriverID, ErrNoProvider))
	}
	return p, nil
}

// errNoDataPath is the cause of a data-path verb on an object made
// without a provider (a fake kernel's).
var errNoDataPath = fmt.Errorf("object has no data path: %w", ErrNotSupported)

// fd is the char device's descriptor; ok is false for a context that is
// not backed by one (tests' fake kernels).
func (c *Context) fd() (int, bool) {
	k, ok := c.k.(fdKernel)
	return k.fd, ok
}

// mapQueue maps length bytes of the char device at offset, the cookie a
// driver returned for a queue it shares with user space (rxe's struct
// mminfo). Unmap the result with unix.Munmap.
func (c *Context) mapQueue(offset uint64, length int) ([]byte, error) {
	op := fmt.Sprintf("map queue at %#x", offset)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, wrap(c.dev.Name, op, errClosed)
	}
	fd, ok := c.fd()
	if !ok {
		return nil, wrap(c.dev.Name, op, errNoDataPath)
	}
	if length <= 0 || int64(offset) < 0 {
		return nil, invalid(c.dev.Name, op, "length %d", length)
	}
	b, err := unix.Mmap(fd, int64(offset), length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	return b, wrap(c.dev.Name, op, err)
}

// doorbell writes cmd, a complete write() command (struct
// ib_uverbs_cmd_hdr first), to the char device: the data path's
// doorbells (POST_SEND without work requests, REQ_NOTIFY_CQ), through
// the scheduler's system-call path (doorbell.go); it does not allocate
// unless it fails. Any response pointer inside cmd must point to
// memory outside the Go heap, since the kernel writes there.
func (c *Context) doorbell(op string, cmd []byte) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return wrap(c.dev.Name, op, errClosed)
	}
	fd, _ := c.fd()
	for {
		n, err := doorbellWrite(fd, cmd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return c.wrapCmd(op, err)
		}
		if n != len(cmd) {
			return wrap(c.dev.Name, op, unix.EPROTO)
		}
		return nil
	}
}
