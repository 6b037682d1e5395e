package waitfd

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// counter fetches an eventfd's value itself, as rdma_cm's GET_EVENT does:
// the try function Wait calls.
type counter struct {
	got     uint64
	tries   int
	handled int
	buf     [8]byte
	try     func(uintptr) bool // c.fetch, made once
	handle  func()             // c.count, made once
}

func newCounter() *counter {
	c := &counter{}
	c.try, c.handle = c.fetch, c.count
	return c
}

func (c *counter) count() { c.handled++ }

func (c *counter) fetch(fd uintptr) bool {
	c.tries++
	n, err := unix.Read(int(fd), c.buf[:])
	if err == unix.EAGAIN {
		return false
	}
	if err == nil && n == 8 {
		c.got = uint64(c.buf[0]) | uint64(c.buf[1])<<8
	}
	return true
}

func TestWait(t *testing.T) {
	fd, sig := newEventfd(t)
	c := newCounter()

	// Something queued: one try.
	signal(t, sig, 3)
	if err := fd.Wait(ctxFor(t, 5*time.Second), c.try, nil); err != nil || c.got != 3 || c.tries != 1 {
		t.Fatalf("Wait on a queued value: %v, got %d after %d tries", err, c.got, c.tries)
	}
	// Nothing queued yet: the try says not done, the wait parks, and
	// readiness brings a second try.
	c.tries = 0
	go func() {
		time.Sleep(20 * time.Millisecond)
		signal(t, sig, 9)
	}()
	if err := fd.Wait(ctxFor(t, 5*time.Second), c.try, nil); err != nil || c.got != 9 || c.tries != 2 {
		t.Fatalf("Wait on a later value: %v, got %d after %d tries (want 2)", err, c.got, c.tries)
	}
	// A deadline and a cancellation end it.
	if err := fd.Wait(ctxFor(t, 20*time.Millisecond), c.try, nil); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Wait past its deadline: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fd.Wait(ctx, c.try, nil) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not wake the Wait")
	}
	// Close wakes a waiter, and a Wait after Close fails at once.
	go func() { done <- fd.Wait(context.Background(), c.try, nil) }()
	time.Sleep(20 * time.Millisecond)
	fd.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Wait ended by Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the Wait")
	}
	if err := fd.Wait(context.Background(), c.try, nil); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Wait after Close: %v", err)
	}
}

// TestWaitNoAllocs: a Wait that finds its value queued, with a try and a
// handle made once, does not allocate.
func TestWaitNoAllocs(t *testing.T) {
	fd, sig := newEventfd(t)
	c := newCounter()
	one := [8]byte{1}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		unix.Write(sig, one[:])
		if err := fd.Wait(ctx, c.try, c.handle); err != nil {
			t.Fatal(err)
		}
	})
	if c.handled == 0 {
		t.Fatal("the handle was not called")
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per Wait", allocs)
	}
}
