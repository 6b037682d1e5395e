package rsocket

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
)

func TestAckTimeoutExp(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{-1, -1},
		{0, 17},
		{DefaultAckTimeout, 17},
		{DefaultAckTimeout + 1, 18},
		{DefaultAckTimeout - 1, 17},
		{time.Nanosecond, 1}, // never 0: no timeout at all
		{ackTimeoutUnit, 1},
		{2 * ackTimeoutUnit, 1},
		{3 * ackTimeoutUnit, 2},
		{268 * time.Millisecond, 16},
		{time.Second, 18},
		{time.Hour, 30},
		{10 * time.Hour, 31},
	} {
		if got := ackTimeoutExp(c.d); got != c.want {
			t.Errorf("ackTimeoutExp(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	// The default's bound: the first send and its retries, each given
	// the ACK timeout.
	if b := failureBound(uverbs.QPAttr{Timeout: 17, RetryCnt: DefaultRetryCount}); b != DefaultFailureBound || b.Round(100*time.Millisecond) != 8600*time.Millisecond {
		t.Errorf("failure bound of 2^17 and %d retries %v, DefaultFailureBound %v", DefaultRetryCount, b, DefaultFailureBound)
	}
}

func TestFailureBound(t *testing.T) {
	for _, c := range []struct {
		timeout, retry uint8
		want           time.Duration
	}{
		{0, 7, 0}, // no ACK timeout: the transport waits for ever
		{1, 0, 2 * 8192 * time.Nanosecond},
		{14, 7, 2 * 8 * 67108864 * time.Nanosecond},
		{31, 7, 2 * 8 * 4096 << 31 * time.Nanosecond},
	} {
		if got := failureBound(uverbs.QPAttr{Timeout: c.timeout, RetryCnt: c.retry}); got != c.want {
			t.Errorf("failureBound(2^%d, %d retries) = %v, want %v", c.timeout, c.retry, got, c.want)
		}
	}
}

func TestRetryCount(t *testing.T) {
	for n, want := range map[int]uint8{0: DefaultRetryCount, -1: 0, 1: 1, 7: 7} {
		if got, err := retryCount(n); got != want || err != nil {
			t.Errorf("retryCount(%d) = %d, %v; want %d", n, got, err, want)
		}
	}
	if _, err := retryCount(8); !errors.Is(err, unix.EINVAL) {
		t.Errorf("retryCount(8): %v, want EINVAL", err)
	}
}
