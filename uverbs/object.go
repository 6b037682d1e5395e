package uverbs

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// object is what every kernel object's Go value shares: its context, its
// handle, and whether it is gone.
//
// Its lock orders the object's commands against its destruction. A
// command that names the object's handle to the kernel (a modify, a
// query, the creation of a QP in a PD on two CQs) holds it for reading
// from the check that the object is open until the kernel has answered;
// Close holds it for writing around the destroy command. So a handle is
// never sent after the object was destroyed, when the kernel may already
// have given the number to a new object of the same type, and a CQ,
// PD or SRQ that a creation names stays alive until the creation is done
// (its Close then waits, and the kernel refuses it with EBUSY while the
// new object uses it). Nothing holding an object's lock waits for
// another object's lock for writing, and creations that name several
// objects take them in one order (objectRank), so the locks cannot
// deadlock.
type object struct {
	ctx    *Context
	handle uint32
	kind   string // "cq", "qp", "srq", "pd", ...: names the object in errors and orders locks
	id     uint32 // the QP or SRQ number, the CQ's handle
	mu     sync.RWMutex
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
// be nil. Concurrent calls destroy once: the others wait for it and
// return nil, or try again if it failed.
func (o *object) destroyAndRelease(fn, release func() error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	if !o.ctx.isClosed() {
		if err := fn(); !destroyed(err) {
			return err
		}
	}
	o.closed = true
	if release == nil {
		return nil
	}
	return release()
}

// quiescer is a provider's object whose data path names the kernel
// object's handle (rxe's doorbells: POST_SEND, REQ_NOTIFY_CQ). Its
// destroy command runs under the data path's locks (destroyQuiet), and
// on success the data path is closed before they are let go: so no
// doorbell is in the kernel while the object is destroyed (the kernel
// holds the object for the doorbell's command, and refuses the destroy
// with EBUSY meanwhile), and none comes after, when the handle may
// already name a new object.
type quiescer interface {
	destroyQuiet(destroy func() error) error
}

// destroyLocked is a provider's destroyQuiet: it runs destroy with the
// data path's locks held, in order, and marks the data path closed if the
// object is gone (the provider's release unmaps it). A data path closed
// already was released with its context, whose close destroyed the
// kernel's object: nothing is sent.
func destroyLocked(closed *bool, destroy func() error, locks ...*sync.Mutex) error {
	for _, l := range locks {
		l.Lock()
		defer l.Unlock()
	}
	if *closed {
		return nil
	}
	err := destroy()
	*closed = destroyed(err)
	return err
}

// quietly makes destroy run through ops' destroyQuiet when ops is a
// quiescer.
func quietly(ops any, destroy func() error) func() error {
	q, ok := ops.(quiescer)
	if !ok {
		return destroy
	}
	return func() error { return q.destroyQuiet(destroy) }
}

// destroyed reports whether a destroy command's error leaves the object
// gone: success, or a context closed meanwhile.
func destroyed(err error) bool { return err == nil || errors.Is(err, os.ErrClosed) }

// live returns errClosed-wrapped error for op if the object is gone.
func (o *object) live(op string) error {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.closed {
		return wrap(o.ctx.dev.Name, op, errClosed)
	}
	return nil
}

// use holds the object open for a command that names it (see object):
// it fails if the object is closed; otherwise the caller sends the
// command and then calls done.
func (o *object) use(op string) (done func(), err error) {
	o.mu.RLock()
	if o.closed {
		o.mu.RUnlock()
		return nil, wrap(o.ctx.dev.Name, op, errClosed)
	}
	return o.mu.RUnlock, nil
}

// useExclusive is use for commands that change the object's Go state
// along with the kernel's (a resize, a re-registration): no other command
// on the object, and no Close, runs meanwhile.
func (o *object) useExclusive(op string) (done func(), err error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, wrap(o.ctx.dev.Name, op, errClosed)
	}
	return o.mu.Unlock, nil
}

// objectRank is the order in which a command that names several objects
// holds them: PDs, then MRs, CQs (by handle) and SRQs.
var objectRank = map[string]int{"pd": 0, "mr": 1, "cq": 2, "srq": 3}

// useAll is use for several objects at once (nil entries and repeats are
// skipped), taken in objectRank order, so that two creations naming the
// same CQs in another order cannot deadlock against a Close waiting on
// one of them.
func useAll(op string, objs ...*object) (done func(), err error) {
	var set []*object
	for _, o := range objs {
		if o != nil && !slices.Contains(set, o) {
			set = append(set, o)
		}
	}
	slices.SortFunc(set, func(a, b *object) int {
		if r := cmp.Compare(objectRank[a.kind], objectRank[b.kind]); r != 0 {
			return r
		}
		return cmp.Compare(a.handle, b.handle)
	})
	var held []func()
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	for _, o := range set {
		d, err := o.use(op)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, d)
	}
	return release, nil
}

// Handle is the object's uverbs handle: the number the kernel gave it in
// its context's table, with which every command names it (what
// libibverbs keeps in ibv_qp.handle and the like). It is stable while the
// object lives and unique among the live objects of its type in its
// context; another context may use the same number. It is not the
// number RDMA netlink reports (`rdma resource` shows the kernel's
// restrack ids: pdn, cqn, mrn, and a QP's number), and the C tools do
// not print it.
func (o *object) Handle() uint32 { return o.handle }
