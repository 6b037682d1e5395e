// Package waitfd reads the kernel's event file descriptors (uverbs
// completion channels and async event fds, the rdma_cm event channel)
// through Go's netpoller: a goroutine that waits is parked and holds no
// P, a wait ends when its context is done, and Close wakes every waiter.
//
// The fd is made non-blocking (New) or opened so (Adopt) and handed to
// os.NewFile, which registers
// it with the runtime's epoll instance (the uverbs and rdma_cm event
// files implement poll). A read (or, for rdma_cm, the caller's GET_EVENT
// through Wait) is tried first; only when the kernel has
// nothing queued (EAGAIN) does the goroutine park until epoll reports the
// fd readable. The kernel fd is closed by the runtime only once no read
// or Control call uses it any more, so a number reused after Close can
// never be read by a waiter of the old one.
//
// An FD is the only serializer of its readers: one turn, held from the
// read (or fetch) until its result is in the caller's hands (and, for
// Wait, handled), so that concurrent readers each get distinct events,
// none lost and none twice, and events fetched with Wait are handled in
// the order the kernel queued them. TryRead never waits for the turn.
//
// An owner may have Reads poll for a while before they park (SetPoll),
// yielding the P between polls; what ends a parked wait ends a polling
// one.
package waitfd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrClosed is the cause of a wait on, or woken by the Close of, an FD;
// it matches os.ErrClosed.
var ErrClosed = fmt.Errorf("event fd closed: %w", os.ErrClosed)

// DeadlineExceeded is returned when a wait's deadline (its context's)
// passes. It matches both os.ErrDeadlineExceeded and
// context.DeadlineExceeded.
var DeadlineExceeded error = deadlineError{}

type deadlineError struct{}

func (deadlineError) Error() string   { return "deadline exceeded" }
func (deadlineError) Timeout() bool   { return true }
func (deadlineError) Temporary() bool { return true }
func (deadlineError) Is(target error) bool {
	return target == os.ErrDeadlineExceeded || target == context.DeadlineExceeded
}

// longAgo is the read deadline that wakes a parked reader at once.
var longAgo = time.Unix(1, 0)

// FD is one kernel event fd. Reads wait one at a time, in the order the
// runtime gives the turn; every waiter can be stopped by its context or
// by Close. The turn covers the whole read: the system call, and copying
// its result out (Read) or handling it (Wait).
type FD struct {
	f    *os.File
	rc   syscall.RawConn
	fd   int
	turn chan struct{} // holds a token while a Read runs
	done chan struct{} // closed by Close

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// What the reader holding the turn reads into (then copied out,
	// still holding the turn, so that the caller's buffer does not
	// escape), and the callbacks, made once so that a read does not
	// allocate a closure. Only the turn's holder touches them.
	scratch []byte
	want    int
	n       int
	err     error
	got     bool
	readFn  func(uintptr) bool
	tryFn   func(uintptr)
	first   bool // the next read callback is the wait's first

	// An owner that knows more about what the kernel has queued than the
	// fd does (see SetHint): maybe reports whether something may be
	// queued; empty is told when a read found nothing.
	maybe func() bool
	empty func()

	// How long a Read may poll before it parks (see SetPoll), asked at
	// the start of each Read; pollFn is e.pollRead, made once.
	budget func() time.Duration
	pollFn func(uintptr)

	// The read deadline set on f, and the context whose cancellation
	// kicks it into the past (cached: a loop that waits with the same
	// context registers it once).
	deadline time.Time
	kicked   atomic.Bool
	watched  <-chan struct{} // the Done channel of the context watched
	unwatch  func() bool
}

// New takes ownership of fd (closing it on failure), an event fd the
// kernel returned in blocking mode, and makes it non-blocking. name
// names it in os.File errors. The fd must already be close-on-exec (the
// kernel makes the uverbs event fds so) and carry no file status flag
// F_SETFL changes (O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME; a fresh event
// fd carries none): New sets O_NONBLOCK with one F_SETFL, not the
// F_GETFL and F_SETFL of a read-modify-write.
func New(fd int, name string) (*FD, error) {
	if fd < 0 {
		return nil, fmt.Errorf("kernel returned fd %d: %w", fd, unix.EBADF)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: make non-blocking: %w", name, err)
	}
	return Adopt(fd, name)
}

// Adopt is New for an fd its caller opened non-blocking and
// close-on-exec (O_NONBLOCK|O_CLOEXEC, SOCK_NONBLOCK|SOCK_CLOEXEC): it
// changes no flag. An fd that is not non-blocking is refused, since the
// runtime registers only a non-blocking fd with its netpoller.
func Adopt(fd int, name string) (*FD, error) {
	if fd < 0 {
		return nil, fmt.Errorf("kernel returned fd %d: %w", fd, unix.EBADF)
	}
	// os.NewFile reads the flags (its one F_GETFL) and registers the fd
	// with the netpoller only when O_NONBLOCK is set: the probe below
	// fails otherwise, so the raw read, which relies on the flag, never
	// runs on a blocking fd.
	f := os.NewFile(uintptr(fd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	e := &FD{f: f, rc: rc, fd: fd, turn: make(chan struct{}, 1), done: make(chan struct{}), scratch: newScratch(64)}
	e.readFn, e.tryFn, e.pollFn = e.read, e.tryRead, e.pollRead
	// The netpoller must know the fd, or deadlines would not work and a
	// read would block a thread: probe it once.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is not pollable (is it non-blocking?): %w", name, err)
	}
	return e, nil
}

// SetHint lets the FD's owner spare a wait its first read(2). Before
// parking, a wait reads once, since the kernel may have queued something
// the netpoller already reported (the runtime forgets readiness it
// reported before the wait began). When maybe, called at the start of a
// wait, after that point, reports that nothing can be queued yet, the
// wait parks at once: whatever the kernel queues later, epoll reports to
// it. maybe must only say false when it knows; empty is called whenever a
// read found nothing queued. Set the hint before the FD is used.
func (e *FD) SetHint(maybe func() bool, empty func()) { e.maybe, e.empty = maybe, empty }

// SetPoll lets the FD's owner have a Read poll before it parks: budget,
// called with the turn held at the start of every Read, says for how long
// (0 or less: not at all). A wait in the netpoller costs the thread a
// park and a wake-up (epoll_pwait twice and the scheduler's path around
// them) where a blocking read(2) costs one system call; an event that
// comes within the budget is read without them. Polling reads (after the
// hint, as a wait's first read does) and yields the P between reads with
// runtime.Gosched, so that every other goroutine runs, timers fire and
// the collector can stop the poller; it ends at the budget, the context's
// deadline or cancellation, or Close, and the wait then parks as without
// it. The budget is CPU the owner chooses to spend: ask for it only when
// an event is plausibly imminent, never for an idle wait. Set it before
// the FD is used.
func (e *FD) SetPoll(budget func() time.Duration) { e.budget = budget }

// read is the RawConn callback: one read(2) of the non-blocking fd. It
// cannot sleep, so it is raw: on an empty queue the uverbs event files
// answer EAGAIN (ib_uverbs_event_read takes only the queue's spinlock
// before it looks), and so does an eventfd. Through the scheduler's
// system-call path instead, every read woke the sleeping sysmon thread:
// measured in the Soft-RoCE VM, that made an event-mode pingpong 2.2
// times rdma-core's round trip on Linux 6.1 (1.03 raw) and 1.8 on 6.12
// (1.26). Files whose reads can sleep, such as rdma_cm's GET_EVENT (the
// file's mutex), use Wait with a callback of their own.
func (e *FD) read(fd uintptr) bool {
	if e.first {
		e.first = false
		if e.maybe != nil && !e.maybe() {
			return false
		}
	}
	for {
		r, _, errno := readSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(e.scratch))), uintptr(e.want))
		switch errno {
		case 0:
			e.n, e.err = int(r), nil
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if e.empty != nil {
				e.empty()
			}
			return false
		}
		e.n, e.err = 0, errno
		return true
	}
}

func (e *FD) tryRead(fd uintptr) { e.got = e.read(fd) }

// pollRead is a polling Read's callback: a read after the hint.
func (e *FD) pollRead(fd uintptr) {
	e.first = true
	e.got = e.read(fd)
}

// poll is Read's polling phase (SetPoll), with the turn held: got reports
// that it read something (e.n, e.err hold the result); err ends the wait.
func (e *FD) poll(ctx context.Context, dl time.Time) (got bool, err error) {
	if e.budget == nil {
		return false, nil
	}
	d := e.budget()
	if d <= 0 {
		return false, nil
	}
	end := time.Now().Add(d)
	for {
		if err := e.rc.Control(e.pollFn); err != nil {
			return false, e.mapErr(err)
		}
		if e.got {
			return true, nil
		}
		now := time.Now()
		if !now.Before(end) {
			return false, nil
		}
		runtime.Gosched()
		// What ends a parked wait ends a polling one: Close, the
		// context, its deadline.
		if e.closed.Load() {
			return false, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return false, ContextError(err)
		}
		if !dl.IsZero() && !now.Before(dl) {
			return false, DeadlineExceeded
		}
	}
}

// readSyscall is read's system call: raw (see read). BenchmarkReadRuntime
// swaps in unix.Syscall to measure what the raw call costs the rest of the
// process.
var readSyscall = unix.RawSyscall

// newScratch makes the buffer the raw read copies into, with every page
// written once: a fresh heap page the kernel's copy_to_user touched first
// would fault and could sleep allocating it, inside a call the scheduler
// does not know about.
func newScratch(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += os.Getpagesize() {
		b[i] = 0
	}
	b[n-1] = 0
	return b
}

// prepare sizes the scratch buffer for a read of len(b) bytes.
func (e *FD) prepare(b []byte) {
	if len(b) > len(e.scratch) {
		e.scratch = newScratch(len(b))
	}
	e.want = len(b)
}

// result copies what was read into b.
func (e *FD) result(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return copy(b, e.scratch[:e.n]), nil
}

// TryRead reads what the kernel has queued without waiting; ok is false
// when nothing is, and also when another reader holds the turn (it is
// waiting, and takes what comes): TryRead never waits, not even for the
// turn. It fails with an error matching os.ErrClosed once the FD is
// closed. It does not allocate.
func (e *FD) TryRead(b []byte) (n int, ok bool, err error) {
	held, err := e.tryTake()
	if !held {
		return 0, false, err
	}
	defer e.give()
	e.prepare(b)
	if err := e.rc.Control(e.tryFn); err != nil {
		return 0, false, e.mapErr(err)
	}
	if !e.got {
		return 0, false, nil
	}
	n, err = e.result(b)
	return n, true, err
}

// Read waits until the kernel has something queued and reads it into b
// (one event per read for the uverbs files). It returns
// ctx.Err() when ctx is cancelled, DeadlineExceeded when ctx's deadline
// passes, and an error matching os.ErrClosed when the FD is closed,
// before or during the wait.
func (e *FD) Read(ctx context.Context, b []byte) (int, error) {
	return e.wait(ctx, e.readFn, b, nil)
}

// Wait is Read for files whose events are not read(2) but fetched by
// another non-blocking system call, such as rdma_cm's GET_EVENT write:
// it calls try with the fd, with the turn held, until try reports done,
// parking the goroutine in the netpoller between tries (try must return
// false only when the kernel said EAGAIN, so that readiness wakes the
// wait). try must not block. Once try is done, handle (when not nil) is
// called, the turn still held and the fd no longer in use: it takes what
// try got, and may act on it (with Control, say) before another reader
// fetches what the kernel queued next, so that events are handled one at
// a time in the kernel's order. handle must not call the FD's Read,
// TryRead, Wait or Close. Wait returns the same errors as Read; handle
// runs only when Wait returns nil. With try and handle made once (method
// values stored by the caller), Wait does not allocate.
func (e *FD) Wait(ctx context.Context, try func(fd uintptr) (done bool), handle func()) error {
	_, err := e.wait(ctx, try, nil, handle)
	return err
}

// wait is the loop Read and Wait share; b, when not nil, is what a read
// callback reads into, copied out before the turn is given up, and
// handle, when not nil, runs with the turn held once fn is done.
func (e *FD) wait(ctx context.Context, fn func(uintptr) bool, b []byte, handle func()) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, ContextError(err)
	}
	if !e.take(ctx) {
		if e.closed.Load() {
			return 0, ErrClosed
		}
		return 0, ContextError(ctx.Err())
	}
	defer e.give()
	dl, _ := ctx.Deadline()
	if b != nil {
		e.prepare(b)
		if got, err := e.poll(ctx, dl); err != nil {
			return 0, err
		} else if got {
			return e.result(b)
		}
	}
	e.watch(ctx)
	for {
		if err := e.setDeadline(dl); err != nil {
			return 0, e.mapErr(err)
		}
		// A cancellation whose kick came before setDeadline had its
		// deadline overwritten (setDeadline resets it after any kick,
		// which may be a stale one): it must be seen here, or the wait
		// would park for good. One that comes later kicks the deadline
		// set above.
		if err := ctx.Err(); err != nil {
			return 0, ContextError(err)
		}
		if b != nil {
			e.prepare(b)
		}
		e.first = true
		if err := e.rc.Read(fn); err == nil {
			// Done, the turn still held: the result goes to this
			// caller before another reader can read over it.
			if handle != nil {
				handle()
			}
			if b != nil {
				return e.result(b)
			}
			return 0, nil
		} else if !errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, e.mapErr(err)
		}
		// Woken by a deadline: ours, a cancellation, or the stale kick
		// of a context an earlier wait used.
		if err := ctx.Err(); err != nil {
			return 0, ContextError(err)
		}
		if !dl.IsZero() && !time.Now().Before(dl) {
			return 0, DeadlineExceeded
		}
		e.kicked.Store(true)
	}
}

// take gets the turn to read, waiting for it. It fails when the FD is
// closed or ctx is done first.
func (e *FD) take(ctx context.Context) bool {
	select {
	case e.turn <- struct{}{}:
	default:
		select {
		case e.turn <- struct{}{}:
		case <-ctx.Done():
			return false
		case <-e.done:
			return false
		}
	}
	if e.closed.Load() {
		<-e.turn
		return false
	}
	return true
}

// tryTake gets the turn only if nobody holds it: held is false, with a
// nil error, when another reader does, and with ErrClosed when the FD is
// closed (Close holds the turn for good).
func (e *FD) tryTake() (held bool, err error) {
	select {
	case e.turn <- struct{}{}:
	default:
		if e.closed.Load() {
			return false, ErrClosed
		}
		return false, nil
	}
	if e.closed.Load() {
		<-e.turn
		return false, ErrClosed
	}
	return true, nil
}

func (e *FD) give() { <-e.turn }

// watch makes ctx's cancellation wake the reader (by a read deadline in
// the past). Contexts that cannot be cancelled need nothing.
func (e *FD) watch(ctx context.Context) {
	done := ctx.Done()
	if done == nil || done == e.watched {
		return
	}
	if e.unwatch != nil {
		e.unwatch()
	}
	e.watched = done
	e.unwatch = context.AfterFunc(ctx, func() {
		e.kicked.Store(true)
		e.f.SetReadDeadline(longAgo)
	})
}

// setDeadline sets the read deadline unless it is already set.
func (e *FD) setDeadline(dl time.Time) error {
	if !e.kicked.Swap(false) && dl.Equal(e.deadline) {
		return nil
	}
	e.deadline = dl
	return e.f.SetReadDeadline(dl)
}

// Control runs fn with the kernel fd, which stays open (and its number
// unused by anything else) until fn returns: for commands that name the
// fd to the kernel, such as CREATE_CQ naming its completion channel.
func (e *FD) Control(fn func(fd int) error) error {
	var ferr error
	if err := e.rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return e.mapErr(err)
	}
	return ferr
}

// Num is the fd's number, for display; it may be reused once the FD is
// closed (use Control to hand it to the kernel).
func (e *FD) Num() int { return e.fd }

// Close wakes every waiter (their reads return an error matching
// os.ErrClosed) and closes the fd once none uses it. Safe to call more
// than once.
func (e *FD) Close() error {
	e.closeOnce.Do(func() {
		e.closed.Store(true)
		close(e.done)
		e.closeErr = e.f.Close()
		// Take the turn for good once the reader holding it has left
		// (at once: its wait ends with the close), and let go of the
		// context it watched, which would otherwise keep the FD alive.
		e.turn <- struct{}{}
		if e.unwatch != nil {
			e.unwatch()
			e.unwatch, e.watched = nil, nil
		}
	})
	return e.closeErr
}

func (e *FD) mapErr(err error) error {
	if e.closed.Load() || errors.Is(err, os.ErrClosed) {
		return ErrClosed
	}
	return err
}

// ContextError is a context's error as waits return it: a passed
// deadline as DeadlineExceeded, which also matches os.ErrDeadlineExceeded.
func ContextError(err error) error {
	if err == context.DeadlineExceeded {
		return DeadlineExceeded
	}
	return err
}
