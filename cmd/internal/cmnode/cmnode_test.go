package cmnode

import (
	"bytes"
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
		{rdma.RejectErrno(unix.ECONNRESET), -104}, // iWARP's reject, as librdmacm passes it on
		{unix.ETIMEDOUT, -110},
		{errors.New("other"), -22},
	} {
		if got := Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if got := Perror("rdma_connect", fmt.Errorf("connect: %w", rdma.RejectReason(8))); got != "rdma_connect: Connection refused" {
		t.Errorf("Perror: %q", got)
	}
	if got := Perror("rdma_connect", fmt.Errorf("connect: %w", rdma.RejectErrno(unix.ECONNRESET))); got != "rdma_connect: Connection refused" {
		t.Errorf("Perror of iWARP's reject: %q", got)
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

// TestGetRDMAAddr: get_rdma_addr's results and getaddrinfo's failures.
func TestGetRDMAAddr(t *testing.T) {
	h := AddrHints{Port: "7174", Numeric: true}
	src, dst, err := h.GetRDMAAddr("10.0.0.2", "10.0.0.1", false)
	if err != nil || src.String() != "10.0.0.2:0" || dst.String() != "10.0.0.1:7174" {
		t.Errorf("client: %v %v %v", src, dst, err)
	}
	if src, _, err := h.GetRDMAAddr("", "", true); err != nil || src.String() != "0.0.0.0:7174" {
		t.Errorf("server on every address: %v %v", src, err)
	}
	if _, dst, err := h.GetRDMAAddr("", "", false); err != nil || dst.String() != "[::1]:7174" {
		t.Errorf("client without a destination: %v %v", dst, err)
	}
	for _, tc := range []struct {
		h    AddrHints
		host string
		code int
	}{
		{AddrHints{Port: "x"}, "10.0.0.1", -8},
		{AddrHints{Numeric: true}, "name", -2},
		{AddrHints{IB: true}, "fe80::1", -6},
	} {
		if _, _, err := tc.h.GetRDMAAddr("", tc.host, false); err == nil || err.Code != tc.code {
			t.Errorf("%+v %q: %v, want code %d", tc.h, tc.host, err, tc.code)
		}
	}
}

// TestEventError: the failure event's line, and its status returned.
func TestEventError(t *testing.T) {
	var out bytes.Buffer
	ev := &rdma.Event{Type: rdma.EventRejected, Status: rdma.RejectReason(28)}
	if got := EventError(&out, "udaddy", ev); got != 28 {
		t.Errorf("EventError = %d, want 28", got)
	}
	if want := "udaddy: event: RDMA_CM_EVENT_REJECTED, error: 28\n"; out.String() != want {
		t.Errorf("EventError printed %q, want %q", out.String(), want)
	}
}
