package uverbs

import (
	"errors"
	"os"
	"sync"
)

// object is what every kernel object's Go value shares: its context, its
// handle, and whether it is gone.
type object struct {
	ctx    *Context
	handle uint32
	mu     sync.Mutex
	closed bool
}

// destroy runs fn, the object's destroy command, once. When the context
// is already closed the kernel destroyed the object with it, and there is
// nothing left to do. A failed destroy (EBUSY while dependants live)
// leaves the object open.
func (o *object) destroy(fn func() error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	if o.ctx.isClosed() {
		o.closed = true
		return nil
	}
	if err := fn(); err != nil {
		if errors.Is(err, os.ErrClosed) {
			o.closed = true
			return nil
		}
		return err
	}
	o.closed = true
	return nil
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
