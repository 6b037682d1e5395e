package waitfd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// newEventfd is an FD over an eventfd, whose 8-byte counter stands for a
// kernel event file: readable when non-zero, pollable, one read drains it.
func newEventfd(t *testing.T) (*FD, int) {
	t.Helper()
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	// A second fd of the same eventfd, to signal it independently of
	// the FD's life.
	sig, err := unix.Dup(efd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(sig) })
	fd, err := New(efd, "test-eventfd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fd.Close() })
	return fd, sig
}

func signal(t *testing.T, sig int, v uint64) {
	t.Helper()
	b := [8]byte{byte(v), byte(v >> 8)}
	if _, err := unix.Write(sig, b[:]); err != nil {
		t.Fatal(err)
	}
}

func TestReadAndTryRead(t *testing.T) {
	fd, sig := newEventfd(t)
	var b [8]byte
	if n, ok, err := fd.TryRead(b[:]); n != 0 || ok || err != nil {
		t.Fatalf("TryRead on nothing: %d, %v, %v", n, ok, err)
	}
	signal(t, sig, 3)
	if n, ok, err := fd.TryRead(b[:]); n != 8 || !ok || err != nil || b[0] != 3 {
		t.Fatalf("TryRead of a queued value: %d, %v, %v, % x", n, ok, err, b)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		signal(t, sig, 5)
	}()
	if n, err := fd.Read(context.Background(), b[:]); n != 8 || err != nil || b[0] != 5 {
		t.Fatalf("Read of a value that comes later: %d, %v, % x", n, err, b)
	}
	// A short buffer: the kernel's error comes back as it is.
	if _, err := fd.Read(ctxFor(t, time.Second), b[:4]); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("short read: %v", err)
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestDeadlineAndCancel(t *testing.T) {
	fd, sig := newEventfd(t)
	var b [8]byte
	start := time.Now()
	_, err := fd.Read(ctxFor(t, 30*time.Millisecond), b[:])
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read past its deadline: %v", err)
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > time.Second {
		t.Fatalf("the deadline of 30ms ended the wait after %v", d)
	}
	// An expired context does not read, even with something queued.
	signal(t, sig, 1)
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fd.Read(expired, b[:]); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with a cancelled context: %v", err)
	}
	if n, err := fd.Read(context.Background(), b[:]); n != 8 || err != nil {
		t.Fatalf("the value queued is still there: %d, %v", n, err)
	}

	// Cancelling wakes a parked waiter at once: well within 100 ms, a
	// bound that leaves room for a busy TCG guest's scheduling (12.5 ms
	// seen on 6.1) and still fails a waiter that polls for cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := fd.Read(ctx, b[:]); done <- err }()
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: %v", err)
		}
		if d := time.Since(t0); d > 100*time.Millisecond {
			t.Fatalf("cancel woke the waiter after %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not wake the waiter")
	}

	// The cancellation of a context an earlier wait used does not end a
	// later wait with another context.
	old, cancelOld := context.WithCancel(context.Background())
	go func() {
		time.Sleep(10 * time.Millisecond)
		signal(t, sig, 1)
	}()
	if _, err := fd.Read(old, b[:]); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := fd.Read(context.Background(), b[:])
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	cancelOld()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("a stale cancellation ended a wait: %v", err)
	default:
	}
	signal(t, sig, 2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCloseWakesEveryWaiter: Close ends every wait, the one reading and
// those waiting for their turn, with os.ErrClosed. The waits have no
// deadline, so only Close can end them; how fast is not this test's to
// time (the race detector in a busy guest took 15-20 ms).
func TestCloseWakesEveryWaiter(t *testing.T) {
	fd, _ := newEventfd(t)
	const waiters = 8
	errs := make(chan error, waiters)
	for range waiters {
		go func() {
			var b [8]byte
			_, err := fd.Read(context.Background(), b[:])
			errs <- err
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := fd.Close(); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		select {
		case err := <-errs:
			if !errors.Is(err, os.ErrClosed) {
				t.Fatalf("wait ended by Close: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not wake every waiter")
		}
	}
	var b [8]byte
	if _, err := fd.Read(context.Background(), b[:]); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, _, err := fd.TryRead(b[:]); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("TryRead after Close: %v", err)
	}
	if err := fd.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestWaitersKeepTheRuntimeResponsive: with GOMAXPROCS=1, goroutines
// parked on events that never come leave the scheduler and the garbage
// collector alone.
func TestWaitersKeepTheRuntimeResponsive(t *testing.T) {
	for _, n := range []int{1, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var fds []*FD
			for range n {
				fd, _ := newEventfd(t)
				fds = append(fds, fd)
			}
			testenv.RequireResponsive(t, fmt.Sprintf("%d waiters", n), n, readers(t, fds))
		})
	}
}

// readers returns a function that starts a goroutine blocked in Read
// on each of fds; t's cleanup closes the fds and waits for them all.
func readers(t *testing.T, fds []*FD) func() {
	var wg sync.WaitGroup
	t.Cleanup(func() {
		for _, fd := range fds {
			fd.Close()
		}
		wg.Wait()
	})
	return func() {
		for _, fd := range fds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var b [8]byte
				fd.Read(context.Background(), b[:])
			}()
		}
	}
}

// TestNoAllocs: a read that finds its value queued, and a TryRead, do
// not allocate.
func TestNoAllocs(t *testing.T) {
	fd, sig := newEventfd(t)
	one := [8]byte{1}
	allocs := testing.AllocsPerRun(100, func() {
		unix.Write(sig, one[:])
		var b [8]byte
		if _, err := fd.Read(context.Background(), b[:]); err != nil {
			t.Fatal(err)
		}
		unix.Write(sig, one[:])
		if _, ok, err := fd.TryRead(b[:]); !ok || err != nil {
			t.Fatal(ok, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per read", allocs)
	}
	runtime.KeepAlive(fd)
}

func TestNewRefusesBadFD(t *testing.T) {
	if _, err := New(-1, "bad"); !errors.Is(err, unix.EBADF) {
		t.Fatalf("New(-1): %v", err)
	}
	// A regular file is not pollable.
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	rfd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(rfd, "regular"); err == nil {
		t.Fatal("New accepted a regular file")
	}
}

// TestReuseAfterClose: once an FD is closed, its number may be the
// kernel's answer to the next open; the closed FD's reads still fail
// with os.ErrClosed and never touch the new file.
func TestReuseAfterClose(t *testing.T) {
	fd, _ := newEventfd(t)
	num := fd.Num()
	if err := fd.Close(); err != nil {
		t.Fatal(err)
	}
	reused, err := unix.Eventfd(7, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(reused)
	if reused != num {
		t.Logf("the kernel gave fd %d, not the closed %d: the check below still holds", reused, num)
	}
	var b [8]byte
	if _, err := fd.Read(context.Background(), b[:]); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read on a closed FD: %v", err)
	}
	if _, _, err := fd.TryRead(b[:]); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("TryRead on a closed FD: %v", err)
	}
	// The new file's value is still there: nobody read it.
	if n, err := unix.Read(reused, b[:]); n != 8 || err != nil || b[0] != 7 {
		t.Fatalf("the new file was read through the closed FD: %d, %v, % x", n, err, b)
	}
}

// TestHint: with a hint that says nothing is queued, a wait parks without
// reading first and still gets what the kernel queues later; a read that
// finds nothing tells the owner.
func TestHint(t *testing.T) {
	fd, sig := newEventfd(t)
	var asked, emptied int
	fd.SetHint(func() bool { asked++; return false }, func() { emptied++ })
	go func() {
		time.Sleep(20 * time.Millisecond)
		signal(t, sig, 4)
	}()
	var b [8]byte
	if n, err := fd.Read(ctxFor(t, 5*time.Second), b[:]); n != 8 || err != nil || b[0] != 4 {
		t.Fatalf("Read with a hint: %d, %v", n, err)
	}
	if asked != 1 || emptied != 0 {
		t.Fatalf("hint asked %d times, empty told %d times; want 1 and 0 (no read found nothing)", asked, emptied)
	}
	if _, ok, _ := fd.TryRead(b[:]); ok || emptied != 1 {
		t.Fatalf("TryRead on nothing: ok %v, empty told %d times", ok, emptied)
	}
}

// TestNewAndAdoptFlags: New makes a blocking fd non-blocking and keeps
// its close-on-exec; Adopt takes a non-blocking fd as it is and refuses
// a blocking one (the netpoller would not know it).
func TestNewAndAdoptFlags(t *testing.T) {
	flags := func(fd int) (fl, fdfl int) {
		t.Helper()
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		fdfl, err = unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fl, fdfl
	}
	fd, _ := newEventfd(t)
	if fl, fdfl := flags(fd.Num()); fl&unix.O_NONBLOCK == 0 || fdfl&unix.FD_CLOEXEC == 0 {
		t.Fatalf("New: flags %#x, fd flags %#x: want O_NONBLOCK and FD_CLOEXEC", fl, fdfl)
	}

	nb, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Adopt(nb, "nonblocking-eventfd")
	if err != nil {
		t.Fatalf("Adopt of a non-blocking fd: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	if fl, fdfl := flags(a.Num()); fl&unix.O_NONBLOCK == 0 || fdfl&unix.FD_CLOEXEC == 0 {
		t.Fatalf("Adopt: flags %#x, fd flags %#x: want O_NONBLOCK and FD_CLOEXEC", fl, fdfl)
	}

	blk, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := Adopt(blk, "blocking-eventfd"); err == nil {
		b.Close()
		t.Fatal("Adopt accepted a blocking fd")
	}
	// Refused, the fd is closed: its number may be reused, so only check
	// that nothing fails on the test's side.
	if _, err := Adopt(-1, "bad"); !errors.Is(err, unix.EBADF) {
		t.Fatalf("Adopt(-1): %v", err)
	}
}
