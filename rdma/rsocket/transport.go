package rsocket

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/rdmastack/rdmastack/rdma"
)

// The RC transport's retransmission, which decides how soon a connection
// whose peer went silent fails: a packet is sent again when no
// acknowledgement came within the ACK timeout, at most the retry count
// times, and then its work request completes with a retry-exceeded
// error (a *CompletionError) and the connection fails.
const (
	// DefaultAckTimeout is the ACK timeout of a Dialer or ListenConfig
	// that leaves it 0: 4.096 µs × 2^17, about 537 ms, what Linux 6.12's
	// rdma_cm gives a RoCE route (6.1's gives 2^19, about 2.1 s).
	DefaultAckTimeout = ackTimeoutUnit << 17
	// DefaultRetryCount is the retry count of a Dialer that leaves it 0.
	// rsockets asks 7, which the InfiniBand specification makes 7
	// retries, but which rxe (Soft-RoCE) takes for "retry forever": a
	// silent peer would then never be noticed.
	DefaultRetryCount = 6
	// DefaultFailureBound is how long, with the default ACK timeout and
	// retry count, a connection with work requests in flight takes at
	// most to fail once its peer went silent: the first send and its 6
	// retries, each given DefaultAckTimeout (7 × 537 ms), rounded up. A
	// connection with nothing in flight starts counting at its next
	// send: a keepalive probe at the latest.
	DefaultFailureBound = 4 * time.Second
)

// ackTimeoutUnit is the unit of the ACK timeout's exponent: 4.096 µs.
const ackTimeoutUnit = 4096 * time.Nanosecond

// maxRetryCount is the largest retry count a QP takes (3 bits).
const maxRetryCount = 7

// ackTimeoutExp is the exponent n of the ACK timeout d asks for, the
// smallest with 4.096 µs × 2^n at least d (at most 31), or -1 to leave
// the kernel's: d 0 means DefaultAckTimeout, d < 0 the kernel's. It is
// at least 1: 0 would be no timeout, a QP that waits for ever.
func ackTimeoutExp(d time.Duration) int {
	switch {
	case d < 0:
		return -1
	case d == 0:
		d = DefaultAckTimeout
	}
	units := (d + ackTimeoutUnit - 1) / ackTimeoutUnit
	return min(max(bits.Len64(uint64(units-1)), 1), 31)
}

// setAckTimeout sets id's ACK timeout as ackTimeoutExp gives it. A
// kernel without the option (before Linux 5.1) keeps its own unless d
// asked for one.
func setAckTimeout(id *rdma.ID, d time.Duration) error {
	n := ackTimeoutExp(d)
	if n < 0 {
		return nil
	}
	err := id.SetOption(rdma.OptionAckTimeout, n)
	if d == 0 && errors.Is(err, rdma.ErrNotSupported) {
		return nil
	}
	return err
}

// retryCount is the QP retry count n asks for: 0 means
// DefaultRetryCount, < 0 none.
func retryCount(n int) (uint8, error) {
	switch {
	case n == 0:
		return DefaultRetryCount, nil
	case n < 0:
		return 0, nil
	case n > maxRetryCount:
		return 0, fmt.Errorf("retry count %d: at most %d: %w", n, maxRetryCount, errInvalid)
	}
	return uint8(n), nil
}
