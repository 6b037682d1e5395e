package waitfd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// newPolling is an eventfd FD whose Reads poll for budget before they
// park; asked counts the hint's calls (every polling read asks it first;
// a wait that parks asks it once per wake-up).
func newPolling(t *testing.T, budget time.Duration) (fd *FD, sig int, asked *atomic.Int64) {
	fd, sig = newEventfd(t)
	asked = new(atomic.Int64)
	fd.SetHint(func() bool { asked.Add(1); return true }, nil)
	fd.SetPoll(func() time.Duration { return budget })
	return fd, sig, asked
}

// TestPollReads: a polling Read takes what the kernel queues while it
// polls, without allocating, and one with an empty budget parks at once.
func TestPollReads(t *testing.T) {
	fd, sig, asked := newPolling(t, time.Minute)
	// The value comes once the Read has read 10 times: a Read that
	// parked (one read) would never get it.
	go func() {
		for asked.Load() < 10 {
			time.Sleep(time.Millisecond)
		}
		signal(t, sig, 6)
	}()
	var b [8]byte
	if n, err := fd.Read(ctxFor(t, 5*time.Second), b[:]); n != 8 || err != nil || b[0] != 6 {
		t.Fatalf("polling Read of a value that comes after 10 reads: %d, %v, % x (read %d times)", n, err, b, asked.Load())
	}
	one := [8]byte{1}
	allocs := testing.AllocsPerRun(100, func() {
		unix.Write(sig, one[:])
		if _, err := fd.Read(context.Background(), b[:]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per polling read", allocs)
	}

	fd, sig, asked = newPolling(t, 0)
	go func() {
		time.Sleep(20 * time.Millisecond)
		signal(t, sig, 7)
	}()
	if n, err := fd.Read(ctxFor(t, 5*time.Second), b[:]); n != 8 || err != nil || b[0] != 7 {
		t.Fatalf("Read without a budget: %d, %v, % x", n, err, b)
	}
	if n := asked.Load(); n > 2 {
		t.Fatalf("a Read without a budget read %d times: it polled", n)
	}
}

// TestPollEnds: cancellation, a deadline and Close end a Read while it
// polls (its budget far longer than the test), with the error that says
// which.
func TestPollEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{{"cancel", context.Canceled}, {"deadline", os.ErrDeadlineExceeded}, {"close", os.ErrClosed}} {
		t.Run(tc.name, func(t *testing.T) {
			fd, _, asked := newPolling(t, time.Hour)
			start := time.Now()
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			if tc.name == "deadline" {
				ctx = ctxFor(t, 50*time.Millisecond)
			}
			done := make(chan error, 1)
			go func() {
				var b [8]byte
				_, err := fd.Read(ctx, b[:])
				done <- err
			}()
			// Polling (or, for the deadline, perhaps done already).
			for end := time.Now().Add(5 * time.Second); asked.Load() < 10 && len(done) == 0; time.Sleep(time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("the Read is not polling: it read %d times", asked.Load())
				}
			}
			if n := asked.Load(); n < 10 {
				t.Fatalf("the Read ended after %d reads: it did not poll", n)
			}
			switch tc.name {
			case "cancel":
				cancel()
			case "close":
				fd.Close()
			}
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) {
					t.Fatalf("%v, want %v", err, tc.want)
				}
				if tc.name == "deadline" && time.Since(start) < 50*time.Millisecond {
					t.Fatalf("ended after %v, before its deadline", time.Since(start))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the polling Read did not end")
			}
		})
	}
}

// TestPollBounded: a Read polls for its budget and then parks: over a
// 300 ms wait with a 5 ms budget the process spends far less CPU than a
// wait that polled throughout (300 ms). A correctness property, with a
// generous bound, not a timing.
func TestPollBounded(t *testing.T) {
	fd, _, asked := newPolling(t, 5*time.Millisecond)
	var b [8]byte
	cpu0 := testenv.SelfCPU(t)
	if _, err := fd.Read(ctxFor(t, 300*time.Millisecond), b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read of nothing: %v", err)
	}
	if cpu := testenv.SelfCPU(t) - cpu0; cpu > 100*time.Millisecond {
		t.Fatalf("a 300 ms wait with a 5 ms budget cost %v of CPU (read %d times)", cpu, asked.Load())
	}
	if asked.Load() < 2 {
		t.Fatalf("the Read did not poll: it read %d times", asked.Load())
	}
}

// TestPollersKeepTheRuntimeResponsive: with GOMAXPROCS=1, goroutines
// polling for events that never come (budgets longer than the test) yield
// to the others: a 1 ms sleep elsewhere is not stretched and a garbage
// collection stops them at once (testenv.RequireYielding).
func TestPollersKeepTheRuntimeResponsive(t *testing.T) {
	for _, n := range []int{1, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var fds []*FD
			var polls []*atomic.Int64
			for range n {
				fd, _, asked := newPolling(t, time.Hour)
				fds = append(fds, fd)
				polls = append(polls, asked)
			}
			testenv.RequireYielding(t, fmt.Sprintf("%d polling waiters", n), readers(t, fds))
			// They were polling all along, not parked.
			before := polls[0].Load()
			for end := time.Now().Add(5 * time.Second); polls[0].Load() == before; time.Sleep(time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("the waiter stopped polling: the measurement did not cover polling (GOMAXPROCS %d)", runtime.GOMAXPROCS(0))
				}
			}
		})
	}
}
