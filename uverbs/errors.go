package uverbs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

var (
	// ErrDeviceRemoved is matched by the error of a command on a context
	// whose device the kernel removed: the command failed with EIO (what
	// uverbs answers every command once it has disassociated a context:
	// hot-unplug, driver unbind, the device's move to another network
	// namespace) or ENODEV, and RDMA netlink, asked when the error was
	// made, no longer has the context's uverbs char device — the kernel
	// unregisters that before it disassociates the contexts, and a device
	// registered again gets a new index. An EIO on a device that is still
	// there does not match.
	//
	// Only drivers that implement disassociation (mlx5, ...) answer EIO;
	// for the others, rxe and siw included, removing the device waits
	// until every context is closed, and commands keep working meanwhile.
	ErrDeviceRemoved = errors.New("device removed")

	// ErrNotSupported is matched by errors for commands the running
	// kernel or the device's driver lacks (and by EOPNOTSUPP and
	// EPROTONOSUPPORT from the kernel); the text names what is missing.
	// It is ib.ErrNotSupported, the sentinel every package shares.
	ErrNotSupported = ib.ErrNotSupported

	// ErrShared is matched by the error of Close on a shared context, the
	// one rdma.Device.Context hands to every user of a device: it belongs
	// to rdma's device cache, which closes it when the device is gone and
	// unused. Close then changes nothing. It matches unix.EBUSY.
	ErrShared = fmt.Errorf("the context is shared: %w", unix.EBUSY)
)

// Error is the error type of the package. It names the device and the
// operation and keeps the cause (usually a unix.Errno) for errors.Is.
type Error struct {
	Dev string // the RDMA device, e.g. "rxe0"; empty when none is involved
	Op  string // e.g. "create cq", "query port 1"
	Err error

	removed bool // the device was gone when the kernel refused the command
}

func (e *Error) Error() string {
	s := "uverbs: "
	if e.Dev != "" {
		s += e.Dev + ": "
	}
	return s + e.Op + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes a command's EIO or ENODEV match ErrDeviceRemoved when the
// device was gone (see ErrDeviceRemoved), ENODEV and ENXIO match
// os.ErrNotExist, and EOPNOTSUPP and EPROTONOSUPPORT match
// ErrNotSupported.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrDeviceRemoved:
		return e.removed
	case os.ErrNotExist:
		return errors.Is(e.Err, unix.ENODEV) || errors.Is(e.Err, unix.ENXIO)
	case ErrNotSupported:
		return errors.Is(e.Err, unix.EOPNOTSUPP) || errors.Is(e.Err, unix.EPROTONOSUPPORT)
	}
	return false
}

func wrap(dev, op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Dev: dev, Op: op, Err: err}
}

// wrapCmd is the error of a command the kernel refused on the context: an
// EIO or ENODEV is checked against the device's presence (Device.gone)
// at once, for ErrDeviceRemoved.
func (c *Context) wrapCmd(op string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Dev: c.dev.Name, Op: op, Err: err}
	if errors.Is(err, unix.EIO) || errors.Is(err, unix.ENODEV) {
		e.removed = c.dev.gone()
	}
	return e
}

// invalid is the error for bad arguments caught before anything is sent.
func invalid(dev, op, format string, args ...any) error {
	return &Error{Dev: dev, Op: op, Err: fmt.Errorf(format+": %w", append(args, unix.EINVAL)...)}
}

// errClosed is the cause for operations on a closed context or object.
var errClosed = fmt.Errorf("closed: %w", os.ErrClosed)
