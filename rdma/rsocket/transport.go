package rsocket

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/rdmastack/rdmastack/rdma"
)

// The RC transport's retransmission, and the failure bound that decides
// how soon a connection whose peer went silent fails: a packet is sent
// again when no acknowledgement came within the ACK timeout, at most
// the retry count times; a connection whose sends go unacknowledged for
// its failure bound, by default twice that budget, fails with
// ErrPeerSilent (or, where the transport gives up first, with a
// *CompletionError: retry exceeded).
const (
	// DefaultAckTimeout is the ACK timeout of a Dialer or ListenConfig
	// that leaves it 0: 4.096 µs × 2^17, about 537 ms, what Linux 6.12's
	// rdma_cm gives a RoCE route (6.1's gives 2^19, about 2.1 s).
	DefaultAckTimeout = ackTimeoutUnit << 17
	// DefaultRetryCount is the retry count of a Dialer that leaves it
	// 0: rsockets' 7. The InfiniBand specification makes that 7
	// retries; rxe (Soft-RoCE) takes it for "retry for ever", and
	// counts retries per work request rather than per packet, so a
	// smaller count ends healthy connections on a lossy wire (see
	// rsWatchdog). The failure bound notices a silent peer either way.
	DefaultRetryCount = maxRetryCount
	// DefaultFailureBound is how long, with the default ACK timeout and
	// retry count, a connection's sends may go unacknowledged before it
	// fails: twice the transport's budget of the first send and its 7
	// retries, each given DefaultAckTimeout (2 × 8 × 537 ms, about
	// 8.6 s). A connection with nothing in flight starts counting at
	// its next send: a keepalive probe at the latest.
	DefaultFailureBound = 2 * (DefaultRetryCount + 1) * DefaultAckTimeout
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
