package uverbs

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// object is what every kernel object's Go value shares: its context, its
// handle, and whether it is gone.
type object struct {
	ctx    *Context
	handle uint32
	kind   string // "cq", "qp", "srq": names the object in data-path errors
	id     uint32 // the QP or SRQ number, the CQ's handle
	mu     sync.Mutex
	closed bool
}

// fail is the error of a data-path verb on the object, e.g. "post send qp
// 17". It allocates only when there is an error.
func (o *object) fail(op string, err error) error {
	return o.ctx.wrapCmd(fmt.Sprintf("%s %s %d", op, o.kind, o.id), err)
}

// invalid is fail for a request refused before anything is sent.
func (o *object) invalid(op, format string, args ...any) error {
	return o.fail(op, fmt.Errorf(format+": %w", append(args, unix.EINVAL)...))
}

// closedErr is fail for an object that is closed.
func (o *object) closedErr(op string) error { return o.fail(op, errClosed) }

// destroy runs fn, the object's destroy command, once, and then release,
// which unmaps what the provider mapped. When the context is already
// closed the kernel destroyed the object with it, and only release is
// left. A failed destroy (EBUSY while dependants live) leaves the object
// open.
func (o *object) destroy(fn func() error) error { return o.destroyAndRelease(fn, nil) }

// destroyAndRelease is destroy for objects with a data path; release may
// be nil.
func (o *object) destroyAndRelease(fn, release func() error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	if !o.ctx.isClosed() {
		if err := fn(); err != nil && !errors.Is(err, os.ErrClosed) {
			return err
		}
	}
	o.closed = true
	if release == nil {
		return nil
	}
	return release()
}

// live returns errClosed-wrapped error for op if the object is gone.
func (o *object) live(op string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return wrap(o.ctx.dev.Name, op, errClosed)
	}
	return nil
}

// Handle is the object's uverbs handle (what RDMA netlink does not show;
// unique per context and object type).
func (o *object) Handle() uint32 { return o.handle }
