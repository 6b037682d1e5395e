package rdma

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// joinGroup resolves a new UD id from addr to group, gives it a QP and
// joins; it returns the id's endpoint and its MULTICAST_JOIN event.
func joinGroup(t *testing.T, ch *EventChannel, addr, group netip.Addr, sendOnly bool, recvs int) (*endpoint, *Multicast, *Event) {
	t.Helper()
	id := newUDID(t, ch)
	if err := id.ResolveAddr(context.Background(), netip.AddrPortFrom(addr, 0), netip.AddrPortFrom(group, 0), 2*time.Second); err != nil {
		t.Fatalf("ResolveAddr %v: %v", group, err)
	}
	next(t, ch, EventAddrResolved)
	e := newEndpoint(t, id)
	for i := range recvs {
		if err := e.qp.PostRecv(&uverbs.RecvWR{ID: uint64(i), SGE: []uverbs.SGE{{Addr: e.buf.Addr(2048 + 256*i), Length: 256, LKey: e.mr.LKey()}}}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := id.JoinMulticast(context.Background(), group, sendOnly)
	if err != nil {
		t.Fatalf("JoinMulticast: %v", err)
	}
	t.Cleanup(func() { m.Leave() })
	ev := next(t, ch, EventMulticastJoin)
	mgid := ib.GID(netip.AddrFrom16(group.As16()).As16()) // ::ffff:a.b.c.d under RoCE v2
	if ev.ID != id || ev.Multicast != m || ev.Peer.QPNum != MulticastQPN || ev.Peer.QKey != ucma.RDMA_UDP_QKEY ||
		ev.Peer.AH.DGID != mgid || !ev.Peer.AH.IsGlobal {
		t.Fatalf("MULTICAST_JOIN: id %v mc %v peer %+v; want MGID %v", ev.ID, ev.Multicast, ev.Peer, mgid)
	}
	return e, m, ev
}

// TestIntegrationCMMulticast: a receiver joins a group and attaches its
// QP, a send-only member sends to it; both leave. rxe's multicast
// delivery is the kernel's flake on 6.12 (the receiver gets nothing about
// half the time, see shared/ref/vm-harness.md), so there the test asserts
// only the join and leave; on 6.1 UD may drop one datagram, so the sender
// sends more than the one the receiver must get.
func TestIntegrationCMMulticast(t *testing.T) {
	addr, _ := rxeAddr(t)
	group := netip.MustParseAddr("239.1.2.3")
	rch, sch := newChannel(t), newChannel(t)
	re, rm, _ := joinGroup(t, rch, addr, group, false, 4)
	se, sm, sev := joinGroup(t, sch, addr, group, true, 0)

	const sends = 6
	for range sends {
		se.sendUD(t, sev.Peer, "to the group")
		if wc := se.poll(t); wc.Opcode != uverbs.WCSend {
			t.Fatalf("send completed as %v", wc.Opcode)
		}
	}
	flaky := strings.HasPrefix(testenv.KernelRelease(), "6.12")
	var wc [1]uverbs.WC
	got := 0
	for deadline := time.Now().Add(3 * time.Second); got == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n, err := re.cq.Poll(wc[:])
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			data := re.buf.Bytes()[2048+256*int(wc[0].ID)+grhLen : 2048+256*int(wc[0].ID)+int(wc[0].ByteLen)]
			if wc[0].Status != uverbs.WCSuccess || string(data) != "to the group" || wc[0].SrcQP != se.qp.Num() {
				t.Fatalf("received %v %q from QP %d", wc[0].Status, data, wc[0].SrcQP)
			}
			got++
		}
	}
	if got == 0 && !flaky {
		t.Fatalf("no datagram of %d sent to %v arrived", sends, group)
	}
	t.Logf("kernel %s: %d of %d datagrams arrived", testenv.KernelRelease(), got, sends)

	for _, m := range []*Multicast{rm, sm} {
		if err := m.Leave(); err != nil {
			t.Fatalf("Leave: %v", err)
		}
		if err := m.Leave(); err != nil {
			t.Fatalf("second Leave: %v", err)
		}
	}
	if _, err := re.qp.Query(uverbs.QPAttrState); err != nil {
		t.Fatal(err)
	}
	if err := re.qp.DetachMcast(ib.GID(netip.AddrFrom16(group.As16()).As16()), 0); err == nil {
		t.Fatal("detaching a QP that Leave detached succeeds")
	}
	if _, err := newID(t, rch).JoinMulticast(context.Background(), group, false); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("JoinMulticast on an RC id: %v", err)
	}
}
