package rdma

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// TestIntegrationCMIPv6: our client and server over one rxe device on its
// global IPv6 address and on its link-local one, whose zone is the
// netdev's name: connect, one message each way; each id's addresses come
// back with the zone named (the server's too, which the kernel leaves
// unzoned), and the GIDs are the IPv6 addresses.
func TestIntegrationCMIPv6(t *testing.T) {
	for _, c := range []struct {
		name string
		addr func(testing.TB) (netip.Addr, uint32)
	}{{"global", rxetest.Addr6}, {"link-local", rxetest.LinkLocal}} {
		t.Run(c.name, func(t *testing.T) {
			addr, dev := c.addr(t)
			checkNoLeaks(t, &dev)
			sch, cch := newChannel(t), newChannel(t)
			_, dst := listen(t, sch, addr) // checks the listener's address, zone included
			srv, cli, se, ce := connectPair(t, sch, cch, dst, []byte("over IPv6"))

			ca, err := cli.QueryAddr()
			if err != nil || ca.Dst != dst || ca.Src.Addr() != addr || ca.Src.Port() == 0 {
				t.Fatalf("client's addresses %v → %v, want %v → %v: %v", ca.Src, ca.Dst, addr, dst, err)
			}
			sa, err := srv.QueryAddr()
			if err != nil || sa.Src != dst || sa.Dst != ca.Src {
				t.Fatalf("server's addresses %v → %v, want %v → %v: %v", sa.Src, sa.Dst, dst, ca.Src, err)
			}
			t.Logf("client %v → %v, server %v → %v", ca.Src, ca.Dst, sa.Src, sa.Dst)
			g, err := cli.QueryGID()
			if err != nil || g.SGID != g.DGID || [16]byte(g.SGID) != addr.As16() {
				t.Fatalf("client's GIDs %+v (%v), want both %v", g, err, addr)
			}

			pingPong(t, ce, se, "ping6", "pong6")
		})
	}
}

// TestIntegrationCMZone: a link-local address's zone enters by name or by
// index and comes back by name; an unknown zone is a *net.AddrError that
// sends nothing: the id stays unbound, no event comes, and the same id
// then binds and resolves.
func TestIntegrationCMZone(t *testing.T) {
	ll, dev := rxetest.LinkLocal(t)
	checkNoLeaks(t, &dev)
	ifi, err := net.InterfaceByName(ll.Zone())
	if err != nil {
		t.Fatal(err)
	}
	byIndex := ll.WithZone(strconv.Itoa(ifi.Index))
	unknown := ll.WithZone("no-such-if0")
	ch := newChannel(t)

	var ae *net.AddrError
	id := newID(t, ch)
	if err := id.Bind(netip.AddrPortFrom(unknown, 0)); !errors.As(err, &ae) || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("Bind to %v: %v, want a *net.AddrError", unknown, err)
	}
	if a, err := id.QueryAddr(); err != nil || a.Src.Addr().IsValid() && !a.Src.Addr().IsUnspecified() || id.Device() != nil {
		t.Fatalf("after a failed Bind: %+v, %v, device %v", a, err, id.Device())
	}
	if err := id.Bind(netip.AddrPortFrom(byIndex, 0)); err != nil {
		t.Fatalf("Bind to %v: %v", byIndex, err)
	}
	if a, err := id.QueryAddr(); err != nil || a.Src.Addr() != ll || a.Src.Port() == 0 || id.Device() == nil {
		t.Fatalf("bound to %v: %v (%v), device %v; want %v", byIndex, a.Src, err, id.Device(), ll)
	}

	r := newID(t, ch)
	dst := netip.AddrPortFrom(unknown, 7471)
	if err := r.ResolveAddr(context.Background(), netip.AddrPort{}, dst, 2*time.Second); !errors.As(err, &ae) || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("ResolveAddr to %v: %v, want a *net.AddrError", dst, err)
	}
	src := netip.AddrPortFrom(unknown, 0)
	dst = netip.AddrPortFrom(ll, 7471)
	if err := r.ResolveAddr(context.Background(), src, dst, 2*time.Second); !errors.As(err, &ae) {
		t.Fatalf("ResolveAddr from %v: %v, want a *net.AddrError", src, err)
	}
	if err := r.ResolveAddr(context.Background(), netip.AddrPort{}, dst, 2*time.Second); err != nil {
		t.Fatalf("ResolveAddr to %v: %v", dst, err)
	}
	if ev := next(t, ch, EventAddrResolved); ev.ID != r {
		t.Fatalf("ADDR_RESOLVED for another id")
	}
	a, err := r.QueryAddr()
	if err != nil || a.Dst != dst || a.Src.Addr() != ll || r.Device() == nil {
		t.Fatalf("resolved %v: %v → %v (%v), device %v", dst, a.Src, a.Dst, err, r.Device())
	}
	if err := r.ResolveRoute(context.Background(), 2*time.Second); err != nil {
		t.Fatalf("ResolveRoute: %v", err)
	}
	next(t, ch, EventRouteResolved)
}
