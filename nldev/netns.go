package nldev

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/netns"
)

// Why the kernel refuses to move a device or to switch the netns mode.
// Each error matching one of these also matches the errno the kernel
// answered (unix.EOPNOTSUPP, unix.EBUSY) and keeps its extended-ack text.
var (
	// ErrSharedMode: devices move between network namespaces only in
	// exclusive mode; in shared mode (the default) the kernel answers
	// EOPNOTSUPP (ib_device_set_netns_put).
	ErrSharedMode = errors.New("RDMA netns mode is shared: devices cannot move")

	// ErrDriverCannotMove: the device's driver cannot disassociate the
	// user contexts a move resets (no disassociate_ucontext: rxe and siw),
	// so the kernel answers EOPNOTSUPP even in exclusive mode. It also
	// matches ErrNotSupported.
	ErrDriverCannotMove = fmt.Errorf("the device's driver cannot move between network namespaces: %w", ErrNotSupported)

	// ErrBusy: the kernel answered EBUSY. The netns mode changes only
	// while no network namespace but the initial one exists
	// (rdma_compatdev_set), and a namespace being torn down still counts.
	ErrBusy = errors.New("busy")

	// ErrNotNetNS is matched by errors for a file descriptor that is open
	// but is not a network namespace; they also match unix.EINVAL.
	ErrNotNetNS = netns.ErrNotNetNS
)

// explainMove gives a refused move its reason: EOPNOTSUPP means shared
// mode or a driver that cannot move, told apart by asking the mode.
func (c *Client) explainMove(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		sys, serr := c.System()
		if serr == nil && sys.NetnsMode == NetnsShared {
			e.Err = fmt.Errorf("%w: %w", ErrSharedMode, e.Err)
		} else {
			e.Err = fmt.Errorf("%w: %w", ErrDriverCannotMove, e.Err)
		}
	case errors.Is(err, unix.EBUSY):
		return explainBusy(err)
	}
	return e
}

// explainBusy marks the kernel's EBUSY with ErrBusy.
func explainBusy(err error) error {
	var e *Error
	if errors.As(err, &e) && errors.Is(err, unix.EBUSY) {
		e.Err = fmt.Errorf("%w: %w", ErrBusy, e.Err)
	}
	return err
}

// checkNetnsFD refuses, before anything is sent, a descriptor that is
// closed or not a network namespace.
func checkNetnsFD(op string, fd int) error {
	if _, err := netns.Check(fd); err != nil {
		return &Error{Op: op, Err: err}
	}
	return nil
}
