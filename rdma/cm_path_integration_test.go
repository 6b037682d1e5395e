package rdma

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// TestIntegrationCMQueryPaths: an id has no path until its route is
// resolved, then one bidirectional primary path whose GIDs are the ones
// QUERY GID reports and the port's active MTU.
func TestIntegrationCMQueryPaths(t *testing.T) {
	addr, _ := rxeAddr(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, addr)
	id := newID(t, cch)
	if err := id.ResolveAddr(context.Background(), netip.AddrPort{}, dst, 2*time.Second); err != nil {
		t.Fatalf("ResolveAddr: %v", err)
	}
	next(t, cch, EventAddrResolved)
	if p, err := id.QueryPaths(); err != nil || len(p) != 0 {
		t.Fatalf("paths before ResolveRoute: %+v, %v; want none", p, err)
	}
	if err := id.ResolveRoute(context.Background(), 2*time.Second); err != nil {
		t.Fatalf("ResolveRoute: %v", err)
	}
	next(t, cch, EventRouteResolved)

	paths, err := id.QueryPaths()
	if err != nil || len(paths) != 1 {
		t.Fatalf("paths after ResolveRoute: %+v, %v; want one", paths, err)
	}
	p := paths[0]
	if want := PathGMP | PathPrimary | PathBidirectional; p.Flags != want {
		t.Errorf("flags %v, want %v", p.Flags, want)
	}
	g, err := id.QueryGID()
	if err != nil {
		t.Fatal(err)
	}
	if p.Record.SGID != g.SGID || p.Record.DGID != g.DGID {
		t.Errorf("path %v→%v; QUERY GID says %v→%v", p.Record.SGID, p.Record.DGID, g.SGID, g.DGID)
	}
	// On RoCE the path carries the default P_Key, while QUERY GID's
	// sockaddr_ib of an IP id reports 0 (seen on 6.1 and 6.12).
	if p.Record.PKey != 0xffff {
		t.Errorf("path pkey %#x, want the default 0xffff", p.Record.PKey)
	}
	port, err := id.Device().Port(id.Port())
	if err != nil {
		t.Fatal(err)
	}
	if p.Record.MTU != port.ActiveMTU {
		t.Errorf("path MTU %v, port's active MTU %v", p.Record.MTU, port.ActiveMTU)
	}
	// The kernel builds a RoCE path from the route (cma_resolve_iboe_route)
	// and leaves its service id 0; IB's SA query would fill it. (Its LIDs
	// are not asserted: see PathRecord.)
	if p.Record.ServiceID != 0 {
		t.Errorf("service id %#x: want 0 on RoCE", p.Record.ServiceID)
	}
	if p.Record.HopLimit == 0 || p.Record.PacketLifeTime == 0 {
		t.Errorf("hop limit %d, packet lifetime %d: want both set", p.Record.HopLimit, p.Record.PacketLifeTime)
	}
	if err := id.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := id.QueryPaths(); err == nil {
		t.Fatal("QueryPaths on a closed id succeeded")
	}
}
