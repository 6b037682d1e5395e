package nldev

import (
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

var (
	// ErrNoRDMA is returned by Dial when the running kernel has no RDMA
	// netlink support (no ib_core: socket(NETLINK_RDMA) fails with
	// EPROTONOSUPPORT).
	ErrNoRDMA = errors.New("the running kernel has no RDMA netlink support")

	// ErrNotSupported is matched by errors for commands or attributes the
	// running kernel lacks; the error's text names the release that brings
	// them. It is ib.ErrNotSupported, the sentinel every package shares.
	ErrNotSupported = ib.ErrNotSupported
)

// Error is the error type of every Client method. It names the operation,
// keeps the underlying error (usually a unix.Errno) for errors.Is, and the
// kernel's extended-acknowledgement message when there is one.
type Error struct {
	Op      string // e.g. "get device 3", "dump devices"
	Err     error  // the cause: a unix.Errno, ErrNoRDMA, ...
	Message string // the kernel's extended-ack text, if any
}

func (e *Error) Error() string {
	s := "nldev: " + e.Op + ": " + e.Err.Error()
	if e.Message != "" {
		s += " (" + e.Message + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes ENODEV match os.ErrNotExist as ENOENT already does: both mean
// that the device, port or netdev the request named is not there.
func (e *Error) Is(target error) bool {
	return target == os.ErrNotExist && errors.Is(e.Err, unix.ENODEV)
}

// wrap turns what mdlayher/netlink returned into an *Error for op.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, Err: err}
	var oe *netlink.OpError
	if errors.As(err, &oe) {
		e.Err = oe.Err
		e.Message = oe.Message
	}
	return e
}

// notFound is the error for a device or port named by the caller that the
// kernel does not have.
func notFound(op, what string) error {
	return &Error{Op: op, Err: fmt.Errorf("%s: %w", what, os.ErrNotExist)}
}

// invalid is the error for bad input caught before anything is sent.
func invalid(op, why string) error {
	return &Error{Op: op, Err: fmt.Errorf("%s: %w", why, unix.EINVAL)}
}

// errProto marks replies that break the protocol (missing key attributes,
// wrong reply counts).
var errProto = unix.EPROTO

// errNotExistEINVAL is the cause of a lookup the kernel refused with
// EINVAL because the index does not exist: it matches both.
var errNotExistEINVAL = notExistErrno{unix.EINVAL}

type notExistErrno struct{ unix.Errno }

func (e notExistErrno) Is(target error) bool {
	return target == os.ErrNotExist || target == e.Errno
}

func (e notExistErrno) Unwrap() error { return e.Errno }

func isEINVAL(err error) bool { return errors.Is(err, unix.EINVAL) }
