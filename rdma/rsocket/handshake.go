package rsocket

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// Defaults of ListenConfig's handshake bounds.
const (
	// DefaultHandshakeTimeout bounds one accepted connection's handshake
	// (its resources, the accept, the wait for the client's RTU, or on
	// iWARP its first message) when
	// ListenConfig leaves HandshakeTimeout 0.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxHandshakes is how many connections a Listener holds
	// before Accept takes them when ListenConfig leaves MaxHandshakes 0.
	// Each holds its QP and 256 KiB of registered buffers.
	DefaultMaxHandshakes = 128
)

// errBacklog is why a request beyond a listener's MaxHandshakes is
// rejected.
var errBacklog = errors.New("rdma: too many handshakes in flight")

// rsHandshakes is a listener's bookkeeping of its handshakes, apart from
// the CM so that it can be tested without one. Each runs on a goroutine
// of its own under a timeout; what a handshake that succeeds makes
// waits in a queue for accept. At most max are pending (running, or done
// and not yet accepted): a start beyond that fails, and the listener
// rejects the request, so that a flood of requests costs a bounded
// amount of memory.
type rsHandshakes[T any] struct {
	max     int
	timeout time.Duration
	drop    func(T) // frees a result nobody will accept

	ctx    context.Context // cancelled by close: every handshake stops
	cancel context.CancelFunc
	wg     sync.WaitGroup // the handshakes' goroutines
	ready  chan T         // done handshakes' results; room for max
	closed chan struct{}  // closed by close
	failed chan struct{}  // closed by fail

	mu      sync.Mutex
	pending int
	done    bool  // closed: no handshake starts, none is queued
	err     error // why no more requests come (set by fail)
}

func newRSHandshakes[T any](max int, timeout time.Duration, drop func(T)) *rsHandshakes[T] {
	if max <= 0 {
		max = DefaultMaxHandshakes
	}
	if timeout <= 0 {
		timeout = DefaultHandshakeTimeout
	}
	q := &rsHandshakes[T]{max: max, timeout: timeout, drop: drop, ready: make(chan T, max),
		closed: make(chan struct{}), failed: make(chan struct{})}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	return q
}

// start runs hs on a goroutine of its own with a context that ends after
// the timeout or at close. hs must free all it made when it fails. start
// fails, running nothing, when max handshakes are pending (errBacklog) or
// after close (net.ErrClosed).
func (q *rsHandshakes[T]) start(hs func(context.Context) (T, error)) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.done:
		return net.ErrClosed
	case q.pending >= q.max:
		return errBacklog
	}
	q.pending++
	q.wg.Add(1)
	go q.run(hs)
	return nil
}

func (q *rsHandshakes[T]) run(hs func(context.Context) (T, error)) {
	defer q.wg.Done()
	ctx, cancel := context.WithTimeout(q.ctx, q.timeout)
	v, err := hs(ctx)
	cancel()
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case err != nil:
		q.pending--
	case q.done:
		q.pending--
		q.drop(v)
	default:
		q.ready <- v // never blocks: at most max are pending
	}
}

// accept takes the next result of a handshake, waiting until one comes,
// ctx ends, close (net.ErrClosed) or fail (its error, once the queue is
// empty).
func (q *rsHandshakes[T]) accept(ctx context.Context) (T, error) {
	var zero T
	if isClosed(q.closed) {
		return zero, net.ErrClosed
	}
	select {
	case v := <-q.ready:
		return q.take(v)
	case <-q.closed:
		return zero, net.ErrClosed
	case <-q.failed:
		select {
		case v := <-q.ready:
			return q.take(v)
		default:
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		return zero, q.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// take hands v, taken from the queue, to accept.
func (q *rsHandshakes[T]) take(v T) (T, error) {
	q.mu.Lock()
	q.pending--
	done := q.done
	q.mu.Unlock()
	if done { // close began meanwhile, and will not see v
		q.drop(v)
		var zero T
		return zero, net.ErrClosed
	}
	return v, nil
}

// fail makes accept fail with err from now on, once what is queued is
// taken; the first call's err stays.
func (q *rsHandshakes[T]) fail(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
		close(q.failed)
	}
}

// close stops every handshake, waits for their goroutines to end, drops
// the results nobody accepted, and wakes accept with net.ErrClosed. Call
// it once.
func (q *rsHandshakes[T]) close() {
	q.mu.Lock()
	q.done = true
	close(q.closed)
	q.mu.Unlock()
	q.cancel()
	q.wg.Wait()
	for {
		select {
		case v := <-q.ready:
			q.mu.Lock()
			q.pending--
			q.mu.Unlock()
			q.drop(v)
		default:
			return
		}
	}
}

// inFlight is how many handshakes are pending.
func (q *rsHandshakes[T]) inFlight() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}
