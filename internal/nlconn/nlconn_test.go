package nlconn

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev"
)

// fakeDial replaces dial for the test and counts the sockets it opens;
// failWith, when set, is the dial's error.
func fakeDial(t *testing.T) (dials *int, failWith *error) {
	t.Helper()
	dials, failWith = new(int), new(error)
	old := dial
	dial = func() (*nldev.Client, error) {
		if *failWith != nil {
			return nil, *failWith
		}
		*dials++
		return new(nldev.Client), nil
	}
	t.Cleanup(func() {
		mu.Lock()
		if nl != nil {
			drop()
		}
		dial = old
		mu.Unlock()
	})
	mu.Lock()
	if nl != nil {
		drop()
	}
	mu.Unlock()
	return dials, failWith
}

func current(t *testing.T) *nldev.Client {
	t.Helper()
	var got *nldev.Client
	if err := Do(func(c *nldev.Client) error { got = c; return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestOneSocket: calls share one client; the kernel's answers about a
// device keep it, any other error drops it so the next call dials again.
func TestOneSocket(t *testing.T) {
	if _, err := NetNS(); err != nil {
		t.Skipf("no network namespace to tell: %v", err) // every Do dials afresh then
	}
	dials, _ := fakeDial(t)
	first := current(t)
	if c := current(t); c != first || *dials != 1 {
		t.Fatalf("two calls dialled %d sockets", *dials)
	}
	for _, keep := range []error{os.ErrNotExist, fmt.Errorf("no char device: %w", unix.EOPNOTSUPP)} {
		if err := Do(func(*nldev.Client) error { return keep }); !errors.Is(err, keep) {
			t.Fatalf("Do returned %v, want fn's %v", err, keep)
		}
		if c := current(t); c != first {
			t.Fatalf("after %v the socket was dropped", keep)
		}
	}
	if err := Do(func(*nldev.Client) error { return unix.EIO }); !errors.Is(err, unix.EIO) {
		t.Fatalf("Do returned %v, want EIO", err)
	}
	if c := current(t); c == first || *dials != 2 {
		t.Fatalf("after EIO the socket was kept (%d dials)", *dials)
	}
}

// TestDialError: the dial's error comes back unchanged, fn is not called,
// and the next call dials again.
func TestDialError(t *testing.T) {
	dials, failWith := fakeDial(t)
	*failWith = fmt.Errorf("nldev: dial: %w", nldev.ErrNoRDMA)
	called := false
	if err := Do(func(*nldev.Client) error { called = true; return nil }); !errors.Is(err, nldev.ErrNoRDMA) || called {
		t.Fatalf("Do = %v (fn called: %v), want the dial's ErrNoRDMA", err, called)
	}
	*failWith = nil
	current(t)
	if *dials != 1 {
		t.Fatalf("%d dials after a failed one, want 1", *dials)
	}
}
