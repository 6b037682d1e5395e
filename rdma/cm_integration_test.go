package rdma

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// rxeAddr is the IPv4 address both ends of a test connect on, and its
// device's index (rxetest.Addr).
func rxeAddr(t *testing.T) (netip.Addr, uint32) {
	t.Helper()
	return rxetest.Addr(t)
}

func newChannel(t *testing.T) *EventChannel {
	t.Helper()
	ch, err := CreateEventChannel()
	if err != nil {
		t.Fatalf("CreateEventChannel: %v", err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
}

func newID(t *testing.T, ch *EventChannel) *ID {
	t.Helper()
	id, err := ch.CreateID(PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		t.Fatalf("CreateID: %v", err)
	}
	t.Cleanup(func() { id.Close() })
	return id
}

// next is the channel's next event, which must be want.
func next(t *testing.T, ch *EventChannel, want EventType) *Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		t.Fatalf("waiting for %v: %v", want, err)
	}
	ev.Ack()
	if ev.Type != want {
		t.Fatalf("got %v (status %v), want %v", ev.Type, ev.Status, want)
	}
	return ev
}

// listen makes a listener on addr with a free port and returns the port.
func listen(t *testing.T, ch *EventChannel, addr netip.Addr) (*ID, netip.AddrPort) {
	t.Helper()
	l := newID(t, ch)
	if err := l.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		t.Fatalf("Bind: %v", err)
	}
	if err := l.Listen(0); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	a, err := l.QueryAddr()
	if err != nil || a.Src.Port() == 0 || a.Src.Addr() != addr {
		t.Fatalf("listener's address %v: %v", a.Src, err)
	}
	if l.Device() == nil || l.Port() != 1 {
		t.Fatalf("a listener bound to %v has device %v port %d", addr, l.Device(), l.Port())
	}
	return l, a.Src
}

// resolve resolves an id's address and route to dst.
func resolve(t *testing.T, ch *EventChannel, id *ID, dst netip.AddrPort) {
	t.Helper()
	if err := id.ResolveAddr(context.Background(), netip.AddrPort{}, dst, 2*time.Second); err != nil {
		t.Fatalf("ResolveAddr: %v", err)
	}
	next(t, ch, EventAddrResolved)
	if id.Device() == nil {
		t.Fatal("no device after ADDR_RESOLVED")
	}
	if err := id.ResolveRoute(context.Background(), 2*time.Second); err != nil {
		t.Fatalf("ResolveRoute: %v", err)
	}
	next(t, ch, EventRouteResolved)
}

// siwUnreported reports whether state is what 6.1's siw answers QUERY_QP
// whatever its QP's state (RESET: that siw leaves the state out; 6.12's
// reports it).
func siwUnreported(id *ID, state ib.QPState) bool {
	return id.iWARP() && state == ib.QPStateReset
}

// endpoint is a QP with its resources and one registered buffer.
type endpoint struct {
	pd  *uverbs.PD
	qp  *uverbs.QP
	cq  *uverbs.CQ
	buf *membuf.Buffer
	mr  *membuf.MR
}

func newEndpoint(t *testing.T, id *ID) *endpoint {
	t.Helper()
	ctx, err := id.Device().Context()
	if err != nil {
		t.Fatal(err)
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pd.Close() })
	cq, err := ctx.CreateCQ(uverbs.CQAttr{CQE: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cq.Close() })
	buf, err := membuf.New(4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Close() })
	mr, err := buf.Register(pd, uverbs.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	qp, err := id.CreateQP(pd, uverbs.QPInit{SendCQ: cq, RecvCQ: cq,
		Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		t.Fatalf("CreateQP: %v", err)
	}
	t.Cleanup(func() { id.Close() }) // before the CQ and PD
	if id.QP() != qp || qp.Type() != id.QPType() {
		t.Fatal("the id does not hold its QP")
	}
	want := ib.QPStateInit
	if id.QPType() == ib.QPTypeUD {
		want = ib.QPStateRTS
	}
	st, err := qp.Query(uverbs.QPAttrState)
	if siwUnreported(id, st.State) {
		st.State = want
	}
	if err != nil || st.State != want {
		t.Fatalf("a new %v id's QP is in %v (%v), want %v", id.QPType(), st.State, err, want)
	}
	return &endpoint{pd: pd, qp: qp, cq: cq, buf: buf, mr: mr}
}

func (e *endpoint) postRecv(t *testing.T) {
	t.Helper()
	if err := e.qp.PostRecv(&uverbs.RecvWR{ID: 1, SGE: []uverbs.SGE{{Addr: e.buf.Addr(2048), Length: 2048, LKey: e.mr.LKey()}}}); err != nil {
		t.Fatal(err)
	}
}

func (e *endpoint) send(t *testing.T, msg string) {
	t.Helper()
	n := copy(e.buf.Bytes(), msg)
	if err := e.qp.PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{{Addr: e.buf.Addr(0), Length: uint32(n), LKey: e.mr.LKey()}}}); err != nil {
		t.Fatal(err)
	}
}

// poll waits for one completion.
func (e *endpoint) poll(t *testing.T) uverbs.WC {
	t.Helper()
	var wc [1]uverbs.WC
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		n, err := e.cq.Poll(wc[:])
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			if wc[0].Status != uverbs.WCSuccess {
				t.Fatalf("completion %v %v", wc[0].Opcode, wc[0].Status)
			}
			return wc[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no completion in 20s")
	return uverbs.WC{}
}

// connectPair connects a client id to a server listening on the rxe
// address: both ends ESTABLISHED, each with a receive posted.
func connectPair(t *testing.T, sch, cch *EventChannel, dst netip.AddrPort, data []byte) (srv, cli *ID, se, ce *endpoint) {
	t.Helper()
	return connectPairWith(t, sch, cch, dst, data, nil)
}

// connectPairWith is connectPair with prepare, when not nil, called on
// the client's new id before it resolves.
func connectPairWith(t *testing.T, sch, cch *EventChannel, dst netip.AddrPort, data []byte, prepare func(*ID)) (srv, cli *ID, se, ce *endpoint) {
	t.Helper()
	cli = newID(t, cch)
	if prepare != nil {
		prepare(cli)
	}
	resolve(t, cch, cli, dst)
	ce = newEndpoint(t, cli)
	ce.postRecv(t)
	if err := cli.Connect(context.Background(), &ConnParam{PrivateData: data, ResponderResources: 1, InitiatorDepth: 1,
		RetryCount: 7, RNRRetryCount: 7}); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	req := next(t, sch, EventConnectRequest)
	srv = req.ID
	t.Cleanup(func() { srv.Close() })
	if req.Listen == nil || srv == nil || srv == req.Listen || srv.Device() == nil {
		t.Fatalf("CONNECT_REQUEST: id %v listener %v", srv, req.Listen)
	}
	if !bytes.HasPrefix(req.PrivateData, data) || req.Peer.QPNum != ce.qp.Num() || req.Peer.InitiatorDepth != 1 {
		t.Fatalf("CONNECT_REQUEST: private data %q, peer %+v; client QP %d", req.PrivateData, req.Peer, ce.qp.Num())
	}
	se = newEndpoint(t, srv)
	se.postRecv(t)
	if err := srv.Accept(context.Background(), nil); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	est := next(t, cch, EventEstablished)
	if est.ID != cli || est.Peer.QPNum != se.qp.Num() {
		t.Fatalf("client's ESTABLISHED: id %v peer QP %d, server QP %d", est.ID, est.Peer.QPNum, se.qp.Num())
	}
	if ev := next(t, sch, EventEstablished); ev.ID != srv {
		t.Fatal("server's ESTABLISHED is for another id")
	}
	for _, e := range []*endpoint{ce, se} {
		if st, err := e.qp.Query(uverbs.QPAttrState); err != nil || st.State != ib.QPStateRTS {
			t.Fatalf("connected QP in %v (%v), want RTS", st.State, err)
		}
	}
	return srv, cli, se, ce
}

// pingPong sends ping from the client's endpoint and pong back from the
// server's, each end's receive posted (connectPair), and checks both.
func pingPong(t *testing.T, ce, se *endpoint, ping, pong string) {
	t.Helper()
	ce.send(t, ping)
	for _, wc := range []uverbs.WC{ce.poll(t), se.poll(t)} {
		if wc.Opcode == uverbs.WCRecv && string(se.buf.Bytes()[2048:2048+wc.ByteLen]) != ping {
			t.Fatalf("server received %q", se.buf.Bytes()[2048:2048+wc.ByteLen])
		}
	}
	se.send(t, pong)
	for _, wc := range []uverbs.WC{se.poll(t), ce.poll(t)} {
		if wc.Opcode == uverbs.WCRecv && string(ce.buf.Bytes()[2048:2048+wc.ByteLen]) != pong {
			t.Fatalf("client received %q", ce.buf.Bytes()[2048:2048+wc.ByteLen])
		}
	}
}

// TestIntegrationCMConnect: our client and our server, over one rxe
// device: connect, accept, one message each way, disconnect.
func TestIntegrationCMConnect(t *testing.T) {
	addr, _ := rxeAddr(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, addr)
	srv, cli, se, ce := connectPair(t, sch, cch, dst, []byte("hello from the client"))

	g, err := cli.QueryGID()
	if err != nil || g.SGID.IsZero() || g.SGID != g.DGID {
		t.Fatalf("client's GIDs (one device, both ends): %+v %v", g, err)
	}
	a, err := cli.QueryAddr()
	if err != nil || a.Dst != dst || a.Src.Addr() != addr || a.NodeGUID.IsZero() {
		t.Fatalf("client's addresses %+v: %v", a, err)
	}

	pingPong(t, ce, se, "ping", "pong")

	if err := cli.Disconnect(); err != nil {
		t.Fatalf("Disconnect: %v", err)
	}
	if ev := next(t, sch, EventDisconnected); ev.ID != srv {
		t.Fatal("DISCONNECTED for another id")
	}
	if err := srv.Disconnect(); err != nil {
		t.Fatalf("server Disconnect: %v", err)
	}
	next(t, cch, EventDisconnected)
	if err := cli.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := cli.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := cli.Connect(context.Background(), nil); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Connect on a closed id: %v", err)
	}
}

// TestIntegrationCMReject: a rejected request, with private data, and a
// request to a port nobody listens on.
func TestIntegrationCMReject(t *testing.T) {
	addr, _ := rxeAddr(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, addr)

	cli := newID(t, cch)
	resolve(t, cch, cli, dst)
	newEndpoint(t, cli)
	if err := cli.Connect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	req := next(t, sch, EventConnectRequest)
	if err := req.ID.Reject([]byte("go away")); err != nil {
		t.Fatalf("Reject: %v", err)
	}
	req.ID.Close()
	ev := next(t, cch, EventRejected)
	var reason RejectReason
	if !errors.As(ev.Status, &reason) || reason != RejectConsumerDefined || !errors.Is(ev.Status, unix.ECONNREFUSED) {
		t.Fatalf("REJECTED status %v, want %v", ev.Status, RejectConsumerDefined)
	}
	if !bytes.HasPrefix(ev.PrivateData, []byte("go away")) {
		t.Fatalf("REJECTED private data %q", ev.PrivateData)
	}
	if st, err := cli.QP().Query(uverbs.QPAttrState); err != nil || st.State != ib.QPStateErr {
		t.Fatalf("a rejected id's QP is in %v (%v), want ERR", st.State, err)
	}

	// No listener on the port: the CM answers invalid service ID.
	none := netip.AddrPortFrom(addr, dst.Port()+1)
	cli2 := newID(t, cch)
	resolve(t, cch, cli2, none)
	newEndpoint(t, cli2)
	if err := cli2.Connect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ev = next(t, cch, EventRejected)
	if !errors.As(ev.Status, &reason) || reason != RejectInvalidServiceID {
		t.Fatalf("connect to %v (nobody listens): status %v, want %v", none, ev.Status, RejectInvalidServiceID)
	}
}

// TestIntegrationCMUnreachable: an address on the device's subnet that
// no host answers ends in ADDR_ERROR within the timeout.
func TestIntegrationCMUnreachable(t *testing.T) {
	addr, _ := rxeAddr(t)
	ch := newChannel(t)
	id := newID(t, ch)
	b := addr.As4()
	b[3] = 99
	dst := netip.AddrPortFrom(netip.AddrFrom4(b), 7471)
	start := time.Now()
	if err := id.ResolveAddr(context.Background(), netip.AddrPort{}, dst, 500*time.Millisecond); err != nil {
		t.Fatalf("ResolveAddr: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != EventAddrError || ev.Status == nil || ev.ID != id {
		t.Fatalf("resolving %v: %v status %v", dst, ev.Type, ev.Status)
	}
	t.Logf("%v after %v: %v", ev.Type, time.Since(start), ev.Status)
	if _, err := id.CreateQP(nil, uverbs.QPInit{}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("CreateQP without a device: %v", err)
	}
}

// TestIntegrationCMClose: GetEvent wakes on Close; closed channels and
// ids give errors matching os.ErrClosed; an id with an unacknowledged
// event closes at once.
func TestIntegrationCMClose(t *testing.T) {
	addr, _ := rxeAddr(t)
	ch, err := CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	id, err := ch.CreateID(PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	if err := id.ResolveAddr(context.Background(), netip.AddrPort{}, netip.AddrPortFrom(addr, 1), time.Second); err != nil {
		t.Fatal(err)
	}
	ev, err := ch.GetEvent(context.Background())
	if err != nil || ev.Type != EventAddrResolved || id.UnackedEvents() != 1 {
		t.Fatalf("%v %v unacked %d", ev, err, id.UnackedEvents())
	}
	done := make(chan error, 1)
	go func() { _, err := ch.GetEvent(context.Background()); done <- err }()
	time.Sleep(20 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- id.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close of an id with an unacknowledged event hangs")
	}
	ev.Ack()
	ch.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("GetEvent ended by Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake GetEvent")
	}
	if _, err := ch.CreateID(PortSpaceTCP, ib.QPTypeRC); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("CreateID on a closed channel: %v", err)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationCMLeak: connect, accept, disconnect and close 1,000 times
// (100 under the race detector) leave no fd, goroutine or kernel cm_id
// behind.
func TestIntegrationCMLeak(t *testing.T) {
	addr, dev := rxeAddr(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	count := func() (fds, cmids int) {
		ents, _ := os.ReadDir("/proc/self/fd")
		ids, err := nl.CMIDs(dev)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("cm_ids: %v", err)
		}
		return len(ents), len(ids)
	}
	cycle := func() {
		t.Run("", func(t *testing.T) {
			sch, cch := newChannel(t), newChannel(t)
			_, dst := listen(t, sch, addr)
			srv, cli, _, _ := connectPair(t, sch, cch, dst, nil)
			cli.Disconnect()
			next(t, sch, EventDisconnected)
			srv.Disconnect()
			next(t, cch, EventDisconnected)
		})
	}
	cycle() // the device list, netlink sockets and the like are made once
	fds, cmids := count()
	goroutines := runtime.NumGoroutine()
	cycles := testenv.Repeats(1000)
	for range cycles {
		cycle()
		if t.Failed() {
			return
		}
	}
	testenv.WaitFor(t, fmt.Sprintf("the fds, goroutines and cm_ids of %d connections to go", cycles), func() bool {
		f, c := count()
		return f <= fds && c <= cmids && runtime.NumGoroutine() <= goroutines
	})
	if f, c := count(); f > fds || c > cmids || c != 0 {
		t.Fatalf("after %d connections: %d fds (%d before), %d cm_ids (%d before)", cycles, f, fds, c, cmids)
	}
}
