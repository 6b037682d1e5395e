package rsocket

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestRSAddr(t *testing.T) {
	ap := netip.MustParseAddrPort("10.77.0.1:7471")
	a := *AddrFromAddrPort(ap)
	var na net.Addr = a
	if na.Network() != "rdma" || na.String() != "10.77.0.1:7471" || (&a).String() != "10.77.0.1:7471" || a.AddrPort() != ap {
		t.Fatalf("Addr: %s %s %v", na.Network(), na, a.AddrPort())
	}
	if (Addr{}).AddrPort().IsValid() || (Addr{}).String() != "invalid AddrPort" {
		t.Fatalf("zero Addr: %v", Addr{})
	}
	for _, c := range []struct {
		network, address string
		want             string // "" for an error
	}{
		{"rdma", "10.77.0.1:7471", "10.77.0.1:7471"},
		{"rdma4", "[::ffff:10.77.0.1]:7471", "10.77.0.1:7471"},
		{"rdma6", "[fe80::1]:1", "[fe80::1]:1"},
		{"rdma", ":7471", "0.0.0.0:7471"},
		{"rdma6", ":7471", "[::]:7471"},
		{"rdma6", "[fe80::1%7]:9", "[fe80::1%7]:9"},
		{"rdma", "[::1]:9", "[::1]:9"},
		{"rdma4", "[fe80::1]:1", ""},
		{"rdma6", "10.77.0.1:1", ""},
		{"tcp", "10.77.0.1:1", ""},
		{"rdma", "10.77.0.1", ""},
		{"rdma", "10.77.0.1:port", ""},
	} {
		got, err := resolveRS(context.Background(), c.network, c.address)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s %s: %v, want an error", c.network, c.address, got)
			}
			continue
		}
		if err != nil || len(got) != 1 || got[0].String() != c.want {
			t.Errorf("%s %s: %v, %v; want %s", c.network, c.address, got, err, c.want)
		}
	}
	var unknown net.UnknownNetworkError
	if _, err := Dial("udp", "10.77.0.1:1"); !errors.As(err, &unknown) {
		t.Errorf("Dial udp: %v", err)
	}
	if _, err := Listen("rdma7", ":1"); !errors.As(err, &unknown) {
		t.Errorf("Listen rdma7: %v", err)
	}
	for _, c := range []struct {
		a    net.Addr
		want string
	}{
		{nil, "invalid AddrPort"},
		{a, "10.77.0.1:7471"},
		{&a, "10.77.0.1:7471"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 5}, "10.0.0.2:5"},
	} {
		if got, err := addrPortOf(c.a); err != nil || got.String() != c.want {
			t.Errorf("addrPortOf(%v) = %v, %v", c.a, got, err)
		}
	}
	if _, err := addrPortOf(&net.UnixAddr{Name: "x"}); err == nil {
		t.Error("a unix address as the local address")
	}
}
