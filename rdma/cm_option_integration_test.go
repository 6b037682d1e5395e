package rdma

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationCMOptionRoute: TOS becomes the route's traffic class and
// ACK_TIMEOUT the RC QP's timeout (both kernels have both).
func TestIntegrationCMOptionRoute(t *testing.T) {
	addr, _ := rxeAddr(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, addr)
	const tos, ackTimeout = 0x20, 19
	_, cli, _, ce := connectPairWith(t, sch, cch, dst, nil, func(id *ID) {
		if err := id.SetOption(OptionTOS, tos); err != nil {
			t.Fatalf("SetOption TOS: %v", err)
		}
		if err := id.SetOption(OptionAckTimeout, ackTimeout); err != nil {
			t.Fatalf("SetOption ACK_TIMEOUT: %v", err)
		}
	})
	rtr, _, err := cli.InitQPAttr(ib.QPStateRTR)
	if err != nil || rtr.AH.TrafficClass != tos {
		t.Fatalf("RTR traffic class %d (%v), want %#x", rtr.AH.TrafficClass, err, tos)
	}
	q, err := ce.qp.Query(uverbs.QPAttrTimeout)
	if err != nil || q.Timeout != ackTimeout {
		t.Fatalf("connected QP's timeout %d (%v), want %d", q.Timeout, err, ackTimeout)
	}
	if err := cli.SetOption(OptionTOS, 256); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("TOS 256: %v", err)
	}
	ud := newUDID(t, cch)
	if err := ud.SetOption(OptionAckTimeout, 14); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("ACK_TIMEOUT on a UD id: %v", err)
	}
}

// newUDID is a PortSpaceUDP id on ch.
func newUDID(t *testing.T, ch *EventChannel) *ID {
	t.Helper()
	id, err := ch.CreateID(PortSpaceUDP, ib.QPTypeUD)
	if err != nil {
		t.Fatalf("CreateID UDP: %v", err)
	}
	t.Cleanup(func() { id.Close() })
	return id
}

// inUse matches a bind refused for a port another id holds: the kernel
// says EADDRINUSE for two specific addresses, EADDRNOTAVAIL when one is
// a wildcard.
func inUse(err error) bool {
	return errors.Is(err, unix.EADDRINUSE) || errors.Is(err, unix.EADDRNOTAVAIL)
}

// TestIntegrationCMOptionBind: REUSEADDR shares a port between ids that
// all set it; AFONLY lets an IPv6 wildcard and an IPv4 id share one, and
// is refused once the id listens.
func TestIntegrationCMOptionBind(t *testing.T) {
	addr, _ := rxeAddr(t)
	ch := newChannel(t)
	a, b, c := newID(t, ch), newID(t, ch), newID(t, ch)
	for _, id := range []*ID{a, b} {
		if err := id.SetOption(OptionReuseAddr, 1); err != nil {
			t.Fatalf("SetOption REUSEADDR: %v", err)
		}
	}
	if err := a.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		t.Fatal(err)
	}
	q, err := a.QueryAddr()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Bind(q.Src); err != nil {
		t.Fatalf("second bind to %v with REUSEADDR: %v", q.Src, err)
	}
	if err := c.Bind(q.Src); !inUse(err) {
		t.Fatalf("bind to %v without REUSEADDR: %v, want EADDRINUSE", q.Src, err)
	}

	for _, afonly := range []int{0, 1} {
		v6, v4 := newID(t, ch), newID(t, ch)
		if err := v6.SetOption(OptionAFOnly, afonly); err != nil {
			t.Fatalf("SetOption AFONLY %d: %v", afonly, err)
		}
		if err := v6.Bind(netip.AddrPortFrom(netip.IPv6Unspecified(), 0)); err != nil {
			t.Fatalf("bind [::]:0: %v", err)
		}
		q, err := v6.QueryAddr()
		if err != nil || q.Src.Port() == 0 {
			t.Fatalf("[::] bound to %v: %v", q.Src, err)
		}
		err = v4.Bind(netip.AddrPortFrom(addr, q.Src.Port()))
		if afonly == 1 && err != nil {
			t.Fatalf("IPv4 bind to the port of an AFONLY [::] id: %v", err)
		}
		if afonly == 0 && !inUse(err) {
			t.Fatalf("IPv4 bind to the port of a [::] id without AFONLY: %v", err)
		}
		// The kernel takes AFONLY while the id is idle or bound, not later.
		if err := v6.Listen(0); err != nil {
			t.Fatal(err)
		}
		if err := v6.SetOption(OptionAFOnly, 1); !errors.Is(err, unix.EINVAL) {
			t.Fatalf("AFONLY on a listener: %v", err)
		}
	}
}

// TestIntegrationCMNotify: NOTIFY(COMM_EST) makes the passive id
// ESTABLISHED before the active side's RTU; the RTU adds no second one.
func TestIntegrationCMNotify(t *testing.T) {
	addr, _ := rxeAddr(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, addr)
	cli := newID(t, cch)
	resolve(t, cch, cli, dst)
	ce := newEndpoint(t, cli)
	ce.postRecv(t)
	if err := cli.Connect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	srv := next(t, sch, EventConnectRequest).ID
	t.Cleanup(func() { srv.Close() })
	newEndpoint(t, srv).postRecv(t)
	if err := srv.Accept(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.Notify(uverbs.EventCommEst); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if ev := next(t, sch, EventEstablished); ev.ID != srv {
		t.Fatal("ESTABLISHED for another id")
	}
	next(t, cch, EventEstablished)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if ev, err := sch.GetEvent(ctx); err == nil {
		t.Fatalf("after the RTU: %v", ev.Type)
	}
}
