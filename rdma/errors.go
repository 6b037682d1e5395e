package rdma

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

var (
	// ErrDeviceRemoved is matched by errors of a device that disappeared
	// (the same sentinel as uverbs', so errors of its context match too).
	ErrDeviceRemoved = uverbs.ErrDeviceRemoved

	// ErrNoDevices is GetDevices' error when there is no RDMA device at
	// all: librdmacm fails in that case too (with ENODEV, which the error
	// also matches).
	ErrNoDevices = fmt.Errorf("rdma: no RDMA devices: %w", unix.ENODEV)

	// ErrNotSupported is matched by errors for what the running kernel
	// lacks (ib.ErrNotSupported, the sentinel every package shares).
	ErrNotSupported = ib.ErrNotSupported

	// errClosed is the cause of a call on a closed id or channel; it
	// matches os.ErrClosed.
	errClosed = fmt.Errorf("closed: %w", os.ErrClosed)

	// ErrQPExists is matched by the error of CreateQP on an id that has
	// a QP, or is making one in another goroutine: an id has one QP. It
	// also matches unix.EEXIST.
	ErrQPExists = fmt.Errorf("the id has a QP: %w", unix.EEXIST)

	errInvalid = unix.EINVAL
)
