package rdma

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

func TestResolveEP(t *testing.T) {
	for _, c := range []struct {
		in   string
		want netip.AddrPort
		err  error
	}{
		{"10.0.0.1:7471", netip.MustParseAddrPort("10.0.0.1:7471"), nil},
		{"[fe80::1]:1", netip.MustParseAddrPort("[fe80::1]:1"), nil},
		{":7174", netip.MustParseAddrPort("0.0.0.0:7174"), nil},
		{"localhost:99999", netip.AddrPort{}, unix.EINVAL},
		{"no port", netip.AddrPort{}, unix.EINVAL},
	} {
		got, err := resolveEP(context.Background(), c.in)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("resolveEP(%q) = %v, %v; want %v, %v", c.in, got, err, c.want, c.err)
		}
	}
	if _, err := (&EPOptions{PortSpace: PortSpaceIB}).qpType(); !errors.Is(err, unix.EINVAL) {
		t.Errorf("PortSpaceIB endpoint: %v", err)
	}
}
