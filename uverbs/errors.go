package uverbs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

var (
	// ErrDeviceRemoved is matched by errors of operations on a context
	// whose device the kernel has disassociated (hot-unplug, driver
	// unbind): from then on uverbs answers every command with EIO. Only
	// drivers that implement disassociation (mlx5, ...) get there; for
	// the others, rxe and siw included, removing the device waits until
	// every context is closed.
	ErrDeviceRemoved = errors.New("device removed")

	// ErrNotSupported is matched by errors for commands the running
	// kernel or the device's driver lacks (and by EOPNOTSUPP and
	// EPROTONOSUPPORT from the kernel); the text names what is missing.
	// It is ib.ErrNotSupported, the sentinel every package shares.
	ErrNotSupported = ib.ErrNotSupported
)

// Error is the error type of the package. It names the device and the
// operation and keeps the cause (usually a unix.Errno) for errors.Is.
type Error struct {
	Dev string // the RDMA device, e.g. "rxe0"; empty when none is involved
	Op  string // e.g. "create cq", "query port 1"
	Err error
}

func (e *Error) Error() string {
	s := "uverbs: "
	if e.Dev != "" {
		s += e.Dev + ": "
	}
	return s + e.Op + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes EIO match ErrDeviceRemoved (the kernel's answer after
// disassociation), ENODEV and ENXIO match os.ErrNotExist (the device is
// gone), and EOPNOTSUPP and EPROTONOSUPPORT match ErrNotSupported.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrDeviceRemoved:
		return errors.Is(e.Err, unix.EIO)
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

// invalid is the error for bad arguments caught before anything is sent.
func invalid(dev, op, format string, args ...any) error {
	return &Error{Dev: dev, Op: op, Err: fmt.Errorf(format+": %w", append(args, unix.EINVAL)...)}
}

// errClosed is the cause for operations on a closed context or object.
var errClosed = fmt.Errorf("closed: %w", os.ErrClosed)
