package rsocket

import (
	"testing"
	"time"
)

// TestRetransmitLinger: the default linger covers the QP's
// retransmissions, between DefaultLinger and maxLinger.
func TestRetransmitLinger(t *testing.T) {
	for _, tc := range []struct {
		timeout, retries uint8
		want             time.Duration
	}{
		{0, 7, DefaultLinger},  // no ACK timeout
		{14, 7, DefaultLinger}, // 8 × 67ms
		{18, 7, 8 * 1073741824 * time.Nanosecond},
		{18, 0, 1073741824 * time.Nanosecond},
		{19, 7, 8 * 2147483648 * time.Nanosecond},
		{22, 7, maxLinger},
		{31, 7, maxLinger},
	} {
		if got := retransmitLinger(tc.timeout, tc.retries); got != tc.want {
			t.Errorf("retransmitLinger(%d, %d) = %v, want %v", tc.timeout, tc.retries, got, tc.want)
		}
	}
}
