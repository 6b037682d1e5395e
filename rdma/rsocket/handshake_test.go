package rsocket

import (
	"context"
	"errors"
	"github.com/rdmastack/rdmastack/rdma"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeHandshakes is an rsHandshakes of ints that counts what it drops.
func fakeHandshakes(t *testing.T, max int, timeout time.Duration) (*rsHandshakes[int], *atomic.Int32) {
	t.Helper()
	var dropped atomic.Int32
	q := newRSHandshakes(max, timeout, func(int) { dropped.Add(1) })
	t.Cleanup(func() {
		if !isClosed(q.closed) {
			q.close()
		}
	})
	return q, &dropped
}

// gated is a handshake that waits for its gate, then succeeds with v,
// or for its context, which it reports on ended.
func gated(gate <-chan struct{}, v int, ended chan<- error) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		select {
		case <-gate:
			return v, nil
		case <-ctx.Done():
			ended <- ctx.Err()
			return 0, ctx.Err()
		}
	}
}

func acceptWithin(t *testing.T, q *rsHandshakes[int], d time.Duration) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return q.accept(ctx)
}

// TestRSHandshakesBacklog: at most max are pending, running or queued;
// a start beyond fails with errBacklog and runs nothing, and a slot is
// free again once Accept takes a result.
func TestRSHandshakesBacklog(t *testing.T) {
	q, _ := fakeHandshakes(t, 2, time.Hour)
	gate1, gate2 := make(chan struct{}), make(chan struct{})
	ended := make(chan error, 2)
	for i, g := range []chan struct{}{gate1, gate2} {
		if err := q.start(gated(g, i+1, ended)); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	var ran atomic.Bool
	extra := func(context.Context) (int, error) { ran.Store(true); return 3, nil }
	if err := q.start(extra); !errors.Is(err, errBacklog) {
		t.Fatalf("a third start with 2 running: %v, want errBacklog", err)
	}
	close(gate1)
	v, err := acceptWithin(t, q, 5*time.Second)
	if err != nil || v != 1 {
		t.Fatalf("accept: %d, %v; want 1", v, err)
	}
	close(gate2)
	// The second is done but not accepted: it still holds its slot.
	for q.inFlight() != 1 || len(q.ready) != 1 {
		time.Sleep(time.Millisecond)
	}
	if err := q.start(extra); err != nil {
		t.Fatalf("start with 1 pending: %v", err)
	}
	if err := q.start(extra); !errors.Is(err, errBacklog) {
		t.Fatalf("start with 2 pending (one queued): %v, want errBacklog", err)
	}
	got := map[int]bool{}
	for range 2 {
		v, err := acceptWithin(t, q, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got[v] = true
	}
	if !got[2] || !got[3] || !ran.Load() || q.inFlight() != 0 {
		t.Fatalf("accepted %v, pending %d", got, q.inFlight())
	}
}

// TestRSHandshakesTimeout: a handshake that stalls ends at its timeout
// and frees its slot; accept never sees it.
func TestRSHandshakesTimeout(t *testing.T) {
	q, dropped := fakeHandshakes(t, 1, 50*time.Millisecond)
	ended := make(chan error, 1)
	if err := q.start(gated(nil, 1, ended)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the stalled handshake ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled handshake's context never ended")
	}
	for q.inFlight() != 0 {
		time.Sleep(time.Millisecond)
	}
	if err := q.start(func(context.Context) (int, error) { return 7, nil }); err != nil {
		t.Fatalf("start after the timeout: %v", err)
	}
	if v, err := acceptWithin(t, q, 5*time.Second); v != 7 || err != nil {
		t.Fatalf("accept: %d, %v; want 7", v, err)
	}
	if n := dropped.Load(); n != 0 {
		t.Fatalf("%d results dropped", n)
	}
}

// TestRSHandshakesFailedNotQueued: a handshake that fails is never
// accepted; accept goes on waiting (until its context ends).
func TestRSHandshakesFailedNotQueued(t *testing.T) {
	q, _ := fakeHandshakes(t, 4, time.Hour)
	bad := errors.New("bad peer")
	for range 3 {
		if err := q.start(func(context.Context) (int, error) { return 9, bad }); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := acceptWithin(t, q, 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("accept with only failed handshakes: %d, %v", v, err)
	}
	if n := q.inFlight(); n != 0 {
		t.Fatalf("%d pending after 3 failures", n)
	}
}

// TestRSHandshakesClose: close wakes blocked accepts with
// net.ErrClosed, cancels the running handshakes and waits for them, and
// refuses later starts and accepts.
func TestRSHandshakesClose(t *testing.T) {
	q, dropped := fakeHandshakes(t, 8, time.Hour)
	ended := make(chan error, 3)
	for i := range 3 {
		if err := q.start(gated(nil, i, ended)); err != nil {
			t.Fatal(err)
		}
	}
	blocked := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := q.accept(context.Background())
			blocked <- err
		}()
	}
	time.Sleep(20 * time.Millisecond) // let them block (a late one fails the same)
	q.close()
	wg.Wait()
	close(blocked)
	for err := range blocked {
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("accept woken by close: %v", err)
		}
	}
	// close waited for the handshakes: all three have ended.
	close(ended)
	n := 0
	for err := range ended {
		n++
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a handshake stopped by close: %v", err)
		}
	}
	if n != 3 {
		t.Fatalf("close returned with %d of 3 handshakes ended", n)
	}
	if err := q.start(func(context.Context) (int, error) { return 0, nil }); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("start after close: %v", err)
	}
	if _, err := q.accept(context.Background()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept after close: %v", err)
	}
	if d := dropped.Load(); d != 0 || q.inFlight() != 0 {
		t.Fatalf("dropped %d, pending %d", d, q.inFlight())
	}
}

// TestRSHandshakesCloseDrops: results queued when close comes, and
// those of handshakes that succeed while it runs, are dropped.
func TestRSHandshakesCloseDrops(t *testing.T) {
	q, dropped := fakeHandshakes(t, 8, time.Hour)
	for i := range 3 {
		if err := q.start(func(context.Context) (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
	// A handshake that succeeds however its context ends.
	if err := q.start(func(ctx context.Context) (int, error) { <-ctx.Done(); return 5, nil }); err != nil {
		t.Fatal(err)
	}
	for len(q.ready) != 3 {
		time.Sleep(time.Millisecond)
	}
	q.close()
	if d := dropped.Load(); d != 4 || q.inFlight() != 0 {
		t.Fatalf("close dropped %d of 4, pending %d", d, q.inFlight())
	}
}

// TestRSHandshakesFail: after fail, accept hands out what is queued,
// then fails with fail's error.
func TestRSHandshakesFail(t *testing.T) {
	q, _ := fakeHandshakes(t, 8, time.Hour)
	if err := q.start(func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	for len(q.ready) != 1 {
		time.Sleep(time.Millisecond)
	}
	q.fail(rdma.ErrDeviceRemoved)
	q.fail(errors.New("a second cause"))
	if v, err := acceptWithin(t, q, time.Second); v != 1 || err != nil {
		t.Fatalf("accept after fail, one queued: %d, %v", v, err)
	}
	for range 2 {
		if _, err := acceptWithin(t, q, time.Second); !errors.Is(err, rdma.ErrDeviceRemoved) {
			t.Fatalf("accept after fail: %v, want rdma.ErrDeviceRemoved", err)
		}
	}
}

// TestRSHandshakesDefaults: 0 means the documented defaults.
func TestRSHandshakesDefaults(t *testing.T) {
	q, _ := fakeHandshakes(t, 0, 0)
	if q.max != DefaultMaxHandshakes || q.timeout != DefaultHandshakeTimeout || cap(q.ready) != DefaultMaxHandshakes {
		t.Fatalf("max %d, timeout %v, queue %d", q.max, q.timeout, cap(q.ready))
	}
}
