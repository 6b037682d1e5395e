package cmnode

import (
	"errors"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma"
)

// TestStatus: librdmacm's event->status from our typed statuses.
func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{rdma.RejectReason(8), 8},
		{fmt.Errorf("wrapped: %w", rdma.RejectReason(28)), 28},
		{rdma.SIDRStatus(1), 1},
		{unix.ETIMEDOUT, -110},
		{errors.New("other"), -22},
	} {
		if got := Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if got := Perror("rdma_bind_addr", fmt.Errorf("bind: %w", unix.EADDRINUSE)); got != "rdma_bind_addr: Address already in use" {
		t.Errorf("Perror: %q", got)
	}
}

// TestLookup: numeric addresses stay as written; a malformed name fails
// with getaddrinfo's EAI_NONAME text.
func TestLookup(t *testing.T) {
	for _, s := range []string{"10.0.0.1", "::1", "::ffff:10.0.0.1", "fe80::1"} {
		if a, err := Lookup(s); err != nil || a.String() != s {
			t.Errorf("Lookup(%q) = %v, %v", s, a, err)
		}
	}
	_, err := Lookup("bad host")
	var le *LookupError
	if !errors.As(err, &le) || le.Code != -2 || le.Error() != "Name or service not known" {
		t.Errorf("Lookup(bad host): %v", err)
	}
}
