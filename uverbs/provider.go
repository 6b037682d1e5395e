package uverbs

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// How a provider plugs in.
//
// The data path is the driver's: each driver with user-space queues has a
// provider here (as libibverbs has one per driver, reached through the
// context's ops). A Context chooses its provider once, when it opens
// (openProvider), after GET_CONTEXT: that is where a provider maps what
// the whole context needs (mlx5's UAR pages would be mapped there), and
// Close releases it after the context's objects.
//
// Creating a CQ, QP or SRQ runs in three steps around the one create
// command: the provider's prepare hook returns the driver data to send
// and the room for the driver's response (it may allocate first: a
// hardware provider gives the kernel the addresses of queue buffers and
// doorbell records it allocated, as mlx5's struct mlx5_ib_create_cq
// does), the generic code sends the command, and the provider's new hook
// reads the response and maps the queues (rxe's mminfo, siw's keys). A
// failed command undoes what prepare allocated.
//
// The hot verbs (PostSend, PostRecv, Poll) dispatch in one place,
// datapath.go, with a type switch on the provider's concrete object
// rather than through an interface method: a work request passed to an
// interface method escapes to the heap, and the switch keeps them free
// of allocations. What is the same for every provider stays out of the
// providers: the checks of a work request against the QP and the
// transport (checkSend, checkRecv), and Drain's markers (qp_drain.go).
type provider interface {
	// udata is the driver data of the control path's commands.
	udata() driverUdata
	// traits says what the device's transport cannot do (iWARP), and
	// how its kernel flushes.
	traits() traits

	prepareCQ(attr *CQAttr) (driverIO, error)
	newCQ(cq *CQ, d driverIO) (cqOps, error)
	prepareQP(init *QPInit) (driverIO, error)
	newQP(qp *QP, d driverIO) (qpOps, error)
	prepareSRQ(attr *SRQAttr) (driverIO, error)
	newSRQ(srq *SRQ, d driverIO) (srqOps, error)
	// srqNum reads the SRQ number from a driver that reports it in its
	// response rather than the core's (0 for none).
	srqNum(out []byte) uint32
	// modifySRQ is MODIFY_SRQ's driver data: a driver that moves a
	// resized queue writes where to map it into mi, memory pinned
	// through pins for the call (nil, nil: none).
	modifySRQ(pins *kabi.Pins) (in []byte, mi *abi.MmInfo)
	// ahMAC reads the destination MAC a driver reports for a new AH
	// (nil: none).
	ahMAC(out []byte) net.HardwareAddr
	// refuseQueues refuses, before anything is sent, the creation of a
	// queue (what) whose memory the driver expects user space to
	// provide when the provider cannot; hasDataPath reports whether the
	// provider works queues at all.
	refuseQueues(what string) error
	hasDataPath() bool

	// open runs once GET_CONTEXT has made the context: a provider maps
	// what the whole context needs here; close releases it after the
	// context's objects.
	open(c *Context) error
	close() error
}

// driverIO is a create command's driver data: in goes with the command,
// out receives the driver's response, and undo (may be nil) frees what
// prepare allocated when the command fails.
type driverIO struct {
	in, out []byte
	undo    func()
}

// failed runs undo after a failed command.
func (d driverIO) failed() {
	if d.undo != nil {
		d.undo()
	}
}

// sized is the driverIO of a provider that sends nothing and reads n
// bytes back.
func sized(n int) driverIO { return driverIO{out: make([]byte, n)} }

// The providers' objects implement the interfaces.
var (
	_ cqOps  = (*rxeCQ)(nil)
	_ qpOps  = (*rxeQP)(nil)
	_ srqOps = (*rxeSRQ)(nil)
	_ cqOps  = (*siwCQ)(nil)
	_ qpOps  = (*siwQP)(nil)
	_ srqOps = (*siwSRQ)(nil)
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
	// maxSendSGE is the most SGEs a send queue element holds.
	maxSendSGE() int
	release() error
}

type srqOps interface {
	resized() error
	release() error
}

// traits is what generic code must know of a provider: what its
// transport forbids (checked before anything reaches a provider or the
// kernel), and how its kernel flushes.
type traits struct {
	iwarp bool // RC only, no AH, MW, atomics, immediate data or CQ resize; a READ's sink has one SGE
	// flushOnlyAtError: the kernel flushes the send queue when the QP
	// enters the error state, and never what is posted after (siw; rxe
	// flushes a send posted in the error state, as Drain's marker needs).
	flushOnlyAtError bool
}

// unsupported is the error of a verb the device's transport forbids. It
// matches ErrNotSupported, and carries the errno the kernel gives for
// such a verb (EOPNOTSUPP), so a program that prints errno prints what
// rdma-core's does.
func (c *Context) unsupported(op, what string) error {
	return wrap(c.dev.Name, op, fmt.Errorf("%s on %s (%v): %w (%w)", what, c.dev.DriverID, c.transportName(), ErrNotSupported, unix.EOPNOTSUPP))
}

func (c *Context) transportName() string {
	if c.prov.traits().iwarp {
		return "iWARP"
	}
	return "InfiniBand/RoCE"
}

// providerFor chooses a context's provider by its driver.
func providerFor(d ib.DriverID) provider {
	switch d {
	case ib.DriverRXE:
		return rxeProvider{}
	case ib.DriverSIW:
		return siwProvider{}
	case ib.DriverMLX5:
		return mlx5Provider{controlOnly: controlOnly{u: mlx5Udata()}}
	}
	return controlOnly{}
}

// controlOnly is the provider of a driver without a data path here: the
// control path works, and creating a CQ, QP or SRQ on a char device is
// refused before anything is sent.
type controlOnly struct{ u driverUdata }

func (controlOnly) srqNum([]byte) uint32                       { return 0 }
func (controlOnly) modifySRQ(*kabi.Pins) ([]byte, *abi.MmInfo) { return nil, nil }
func (controlOnly) ahMAC([]byte) net.HardwareAddr              { return nil }
func (controlOnly) refuseQueues(string) error                  { return nil }
func (controlOnly) hasDataPath() bool                          { return false }

func (p controlOnly) udata() driverUdata                    { return p.u }
func (controlOnly) traits() traits                          { return traits{} }
func (p controlOnly) prepareCQ(*CQAttr) (driverIO, error)   { return sized(p.u.createCQOut), nil }
func (controlOnly) newCQ(*CQ, driverIO) (cqOps, error)      { return nil, errNoDataPath }
func (p controlOnly) prepareQP(*QPInit) (driverIO, error)   { return sized(p.u.createQPOut), nil }
func (controlOnly) newQP(*QP, driverIO) (qpOps, error)      { return nil, errNoDataPath }
func (p controlOnly) prepareSRQ(*SRQAttr) (driverIO, error) { return sized(p.u.createSRQOut), nil }
func (controlOnly) newSRQ(*SRQ, driverIO) (srqOps, error)   { return nil, errNoDataPath }
func (controlOnly) open(*Context) error                     { return nil }
func (controlOnly) close() error                            { return nil }

// ErrNoProvider is matched by the error of creating a CQ, QP or SRQ on a
// device whose driver has no data-path provider in this package; the
// error names the driver. It matches ErrNotSupported.
var ErrNoProvider = fmt.Errorf("no data-path provider for the driver: %w", ErrNotSupported)

// dataPath says whether a new CQ, QP or SRQ (what) gets a data path:
// false for a context without a char device (the tests' fake kernels:
// control path only). A driver without a provider is refused before
// anything is sent.
func (c *Context) dataPath(op, what string) (bool, error) {
	if err := c.prov.refuseQueues(what); err != nil {
		return false, wrap(c.dev.Name, op, err)
	}
	if !c.k.queues() {
		return false, nil
	}
	if !c.prov.hasDataPath() {
		return false, wrap(c.dev.Name, op, fmt.Errorf("%s: driver %v: %w", what, c.dev.DriverID, ErrNoProvider))
	}
	return true, nil
}

// errNoDataPath is the cause of a data-path verb on an object made
// without a provider (a fake kernel's).
var errNoDataPath = fmt.Errorf("object has no data path: %w", ErrNotSupported)

// mapQueue maps length bytes of the char device at offset, the cookie a
// driver returned for a queue it shares with user space (rxe's struct
// mminfo, siw's keys), through the kernel seam. Unmap the result with
// Context.unmap.
func (c *Context) mapQueue(offset uint64, length int) ([]byte, error) {
	op := fmt.Sprintf("map queue at %#x", offset)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, wrap(c.dev.Name, op, errClosed)
	}
	if length <= 0 || int64(offset) < 0 {
		return nil, invalid(c.dev.Name, op, "length %d", length)
	}
	b, err := c.k.mmap(int64(offset), length)
	return b, wrap(c.dev.Name, op, err)
}

// doorbell writes cmd, a complete write() command (struct
// ib_uverbs_cmd_hdr first), to the char device through the kernel seam:
// the data path's doorbells (POST_SEND without work requests,
// REQ_NOTIFY_CQ), through the scheduler's system-call path
// (doorbell.go); it does not allocate unless it fails. Any response
// pointer inside cmd must point to memory outside the Go heap, since the
// kernel writes there.
func (c *Context) doorbell(op string, cmd []byte) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return wrap(c.dev.Name, op, errClosed)
	}
	for {
		n, err := c.k.doorbell(cmd)
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
