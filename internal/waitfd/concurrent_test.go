package waitfd

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newPipe is an FD over a pipe's read end and the write end: each 8-byte
// record written (atomically, being under PIPE_BUF) is one event, and a
// read of 8 bytes takes exactly one, so that records tell events apart.
func newPipe(t *testing.T) (*FD, int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[1]) })
	fd, err := New(p[0], "test-pipe")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fd.Close() })
	return fd, p[1]
}

func writeRecord(t *testing.T, w int, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if n, err := unix.Write(w, b[:]); n != 8 || err != nil {
		t.Errorf("write record %d: %d, %v", v, n, err)
	}
}

// deliveries checks that got holds each of 1..n exactly once.
func deliveries(t *testing.T, got []uint64, n int) {
	t.Helper()
	seen := make([]int, n+1)
	for _, v := range got {
		if v == 0 || v > uint64(n) {
			t.Fatalf("a reader got %d, not one of the %d records written", v, n)
		}
		seen[v]++
	}
	lost, dup := 0, 0
	for v := 1; v <= n; v++ {
		switch {
		case seen[v] == 0:
			lost++
		case seen[v] > 1:
			dup++
		}
	}
	if lost != 0 || dup != 0 || len(got) != n {
		t.Fatalf("%d records delivered for %d written: %d lost, %d delivered more than once", len(got), n, lost, dup)
	}
}

// TestConcurrentReadersEachEventOnce: 8 goroutines read one pipe while
// records are written; each record reaches exactly one reader, none is
// lost and none duplicated (the result is taken while the turn is held).
func TestConcurrentReadersEachEventOnce(t *testing.T) {
	readEachOnce(t, func(_ int, ctx context.Context, fd *FD, b []byte) (int, bool, error) {
		k, err := fd.Read(ctx, b)
		return k, true, err
	})
}

// TestConcurrentTryReadersEachEventOnce: readers that mix Read and
// TryRead also get each record exactly once.
func TestConcurrentTryReadersEachEventOnce(t *testing.T) {
	readEachOnce(t, func(i int, ctx context.Context, fd *FD, b []byte) (int, bool, error) {
		if i%2 == 0 {
			return fd.TryRead(b)
		}
		k, err := fd.Read(ctx, b)
		return k, true, err
	})
}

// readEachOnce has 8 goroutines read records from one pipe while 20000
// are written, each with read (the i-th reader's way; ok false is a try
// that found nothing, tried again shortly), until all have come; then
// checks each record reached exactly one reader.
func readEachOnce(t *testing.T, read func(i int, ctx context.Context, fd *FD, b []byte) (k int, ok bool, err error)) {
	fd, w := newPipe(t)
	const readers, n = 8, 20000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		mu   sync.Mutex
		got  []uint64
		left atomic.Int64
		wg   sync.WaitGroup
	)
	left.Store(n)
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b [8]byte
			for left.Load() > 0 {
				k, ok, err := read(i, ctx, fd, b[:])
				if errors.Is(err, os.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				if !ok {
					time.Sleep(10 * time.Microsecond)
					continue
				}
				if k != 8 {
					t.Errorf("read %d bytes", k)
					return
				}
				mu.Lock()
				got = append(got, binary.LittleEndian.Uint64(b[:]))
				mu.Unlock()
				if left.Add(-1) == 0 {
					fd.Close() // wakes the readers still waiting
				}
			}
		}()
	}
	for v := range uint64(n) {
		writeRecord(t, w, v+1)
	}
	wg.Wait()
	deliveries(t, got, n)
}

// TestTryReadDoesNotWait: while a Read waits (holding the turn), TryRead
// and a Wait-style try return at once, reporting nothing read, even
// with a record queued for the waiter to take.
func TestTryReadDoesNotWait(t *testing.T) {
	fd, w := newPipe(t)
	done := make(chan error, 1)
	var b [8]byte
	go func() {
		_, err := fd.Read(context.Background(), b[:])
		done <- err
	}()
	time.Sleep(30 * time.Millisecond) // the reader holds the turn, parked
	var c [8]byte
	for i := range 100 {
		t0 := time.Now()
		n, ok, err := fd.TryRead(c[:])
		if d := time.Since(t0); d > 100*time.Millisecond {
			t.Fatalf("TryRead %d took %v while another reader waited", i, d)
		}
		if n != 0 || ok || err != nil {
			t.Fatalf("TryRead while another reader waits: %d, %v, %v", n, ok, err)
		}
	}
	writeRecord(t, w, 7)
	select {
	case err := <-done:
		if err != nil || binary.LittleEndian.Uint64(b[:]) != 7 {
			t.Fatalf("the waiter: %v, % x", err, b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the record")
	}
}

// TestTryReadAfterCloseWithWaiter: once Close has ended a waiter and
// taken the turn for good, TryRead reports the FD closed.
func TestTryReadAfterCloseWithWaiter(t *testing.T) {
	fd, _ := newPipe(t)
	done := make(chan error, 1)
	go func() {
		var b [8]byte
		_, err := fd.Read(context.Background(), b[:])
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	fd.Close()
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read ended by Close: %v", err)
	}
	var b [8]byte
	if _, ok, err := fd.TryRead(b[:]); ok || !errors.Is(err, os.ErrClosed) {
		t.Fatalf("TryRead after Close: %v, %v", ok, err)
	}
}

// TestWaitHandlesInTurn: 8 goroutines Wait on one pipe, each fetching a
// record with its try and handling it in its handle; handles never
// overlap, each record is handled exactly once, and in the order
// written: handling happens before the next fetch.
func TestWaitHandlesInTurn(t *testing.T) {
	fd, w := newPipe(t)
	const waiters, n = 8, 5000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		inside  atomic.Int32
		handled []uint64 // appended by handles only, in turn
		left    atomic.Int64
		wg      sync.WaitGroup
	)
	left.Store(n)
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rec [8]byte
			var got bool
			try := func(raw uintptr) bool {
				k, err := unix.Read(int(raw), rec[:])
				if err == unix.EAGAIN {
					return false
				}
				got = err == nil && k == 8
				return true
			}
			handle := func() {
				if inside.Add(1) != 1 {
					t.Error("two handles ran at once")
				}
				if got {
					handled = append(handled, binary.LittleEndian.Uint64(rec[:]))
				}
				inside.Add(-1)
			}
			for left.Load() > 0 {
				got = false
				err := fd.Wait(ctx, try, handle)
				if errors.Is(err, os.ErrClosed) {
					return
				}
				if err != nil || !got {
					t.Errorf("Wait: %v, got %v", err, got)
					return
				}
				if left.Add(-1) == 0 {
					fd.Close()
				}
			}
		}()
	}
	for v := range uint64(n) {
		writeRecord(t, w, v+1)
	}
	wg.Wait()
	deliveries(t, handled, n)
	for i, v := range handled {
		if v != uint64(i+1) {
			t.Fatalf("handled record %d as the %dth: out of the order written", v, i+1)
		}
	}
}

// TestCloseWakesReadersAndWaiters: Close ends Reads and Waits, those
// parked and those waiting for the turn, with os.ErrClosed, while
// TryReads return at once throughout.
func TestCloseWakesReadersAndWaiters(t *testing.T) {
	fd, _ := newPipe(t)
	const each = 4
	errs := make(chan error, 2*each)
	never := func(uintptr) bool { return false }
	for range each {
		go func() {
			var b [8]byte
			_, err := fd.Read(context.Background(), b[:])
			errs <- err
		}()
		go func() { errs <- fd.Wait(context.Background(), never, nil) }()
	}
	time.Sleep(30 * time.Millisecond)
	stop := make(chan struct{})
	tries := make(chan error, 1)
	go func() {
		var b [8]byte
		for {
			select {
			case <-stop:
				tries <- nil
				return
			default:
			}
			t0 := time.Now()
			_, ok, err := fd.TryRead(b[:])
			if d := time.Since(t0); d > 100*time.Millisecond {
				tries <- errors.New("a TryRead waited")
				return
			}
			if ok || (err != nil && !errors.Is(err, os.ErrClosed)) {
				tries <- err
				return
			}
		}
	}()
	time.Sleep(10 * time.Millisecond)
	if err := fd.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 * each {
		select {
		case err := <-errs:
			if !errors.Is(err, os.ErrClosed) {
				t.Fatalf("wait ended by Close: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not wake every reader and waiter")
		}
	}
	close(stop)
	if err := <-tries; err != nil {
		t.Fatalf("TryRead around Close: %v", err)
	}
}

// TestCancelRacingWaitStart: a context cancelled while its wait is
// starting (taking the turn, setting the deadline) still ends the wait:
// the cancellation's kick is never overwritten by the wait's own
// deadline. Each of many waits, cancelled at a varying moment around
// its start, returns within a second.
func TestCancelRacingWaitStart(t *testing.T) {
	fd, _ := newPipe(t)
	var b [8]byte
	for i := range 3000 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for range i % 7 {
				runtime.Gosched()
			}
			cancel()
		}()
		done := make(chan error, 1)
		go func() {
			_, err := fd.Read(ctx, b[:])
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("wait %d: %v, want context.Canceled", i, err)
			}
		case <-time.After(time.Second):
			t.Fatalf("wait %d: its context was cancelled, and it still waits", i)
		}
		cancel()
	}
}
