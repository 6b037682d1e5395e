package rdma

import (
	"fmt"

	"golang.org/x/sys/unix"

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

	errInvalid = unix.EINVAL
)
