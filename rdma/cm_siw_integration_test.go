package rdma

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// siwEnv is the test's siw guest; at the test's end no cm_id or QP of
// either device may be left (5 s after its cleanups), nor an fd more
// than it began with.
func siwEnv(t *testing.T) *testenv.SIWEnv {
	t.Helper()
	e := testenv.SIW(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	var devs []uint32
	for _, name := range []string{e.Dev, e.PeerDev} {
		d, err := nl.DeviceByName(name)
		if err != nil {
			nl.Close()
			t.Fatal(err)
		}
		devs = append(devs, d.Index)
	}
	// The device cache opens both devices once, and keeps them.
	list, err := GetDevices()
	if err != nil {
		nl.Close()
		t.Fatal(err)
	}
	FreeDevices(list)
	fds := openFDs(t)
	t.Cleanup(func() {
		defer nl.Close()
		left := func() (n int, what []any) {
			for _, dev := range devs {
				ids, err := nl.CMIDs(dev)
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("cm_ids: %v", err)
				}
				qps, err := nl.QPs(dev)
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("QPs: %v", err)
				}
				for _, id := range ids {
					what = append(what, id)
				}
				for _, qp := range qps {
					if qp.Type == ib.QPTypeRC || qp.Type == ib.QPTypeUD {
						what = append(what, qp)
					}
				}
			}
			return len(what), what
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			n, what := left()
			if n == 0 && openFDs(t) <= fds {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("left: %d fds (%d before), %+v", openFDs(t), fds, what)
				return
			}
		}
	})
	return e
}

// peerID is an id of the peer namespace (made there, it stays there) on
// ch; Close at the test's end.
func peerID(t *testing.T, e *testenv.SIWEnv, ch *EventChannel, ps PortSpace, qpType ib.QPType) *ID {
	t.Helper()
	var id *ID
	var err error
	e.InPeer(t, func() { id, err = ch.CreateID(ps, qpType) })
	if err != nil {
		t.Fatalf("CreateID in the peer namespace: %v", err)
	}
	t.Cleanup(func() { id.Close() })
	return id
}

// peerConnect is id.Connect from a thread of the peer namespace: siw
// makes the connection's TCP socket in the namespace of the thread that
// connects, not the id's (from another, binding the id's address fails
// with EADDRNOTAVAIL).
func peerConnect(t *testing.T, e *testenv.SIWEnv, id *ID, param *ConnParam) (err error) {
	t.Helper()
	e.InPeer(t, func() { err = id.Connect(context.Background(), param) })
	return err
}

// pattern is n bytes that differ from one test to the next (seed).
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// TestIntegrationSIWCMConnect: on Soft-iWARP (iw_cm over TCP), our
// client on siw1 (peer namespace) and our server on siw0: Connect and
// Accept each carry the most private data iWARP takes (251 bytes), which
// arrives whole and exact; one byte more is refused with EINVAL before
// anything is sent; a message each way; the client's Disconnect reaches
// the server as DISCONNECTED and the server's answer the client.
func TestIntegrationSIWCMConnect(t *testing.T) {
	e := siwEnv(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, e.Addr)
	cli := peerID(t, e, cch, PortSpaceTCP, ib.QPTypeRC)
	resolve(t, cch, cli, dst)
	if d := cli.Device(); d == nil || d.Name() != e.PeerDev {
		t.Fatalf("the client resolved to %v, want %s", d, e.PeerDev)
	}
	ce := newEndpoint(t, cli)
	ce.postRecv(t)

	req := pattern(iwarpPrivateData, 1)
	param := &ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	param.PrivateData = append(req, 0)
	if err := peerConnect(t, e, cli, param); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("Connect with %d bytes of private data: %v", len(param.PrivateData), err)
	}
	param.PrivateData = req
	if err := peerConnect(t, e, cli, param); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	ev := next(t, sch, EventConnectRequest)
	srv := ev.ID
	t.Cleanup(func() { srv.Close() })
	if !bytes.Equal(ev.PrivateData, req) || srv.Device() == nil || srv.Device().Name() != e.Dev {
		t.Fatalf("CONNECT_REQUEST on %v: %d bytes of private data %x, want %x", srv.Device(), len(ev.PrivateData), ev.PrivateData, req)
	}
	t.Logf("CONNECT_REQUEST's peer: %+v", ev.Peer)
	se := newEndpoint(t, srv)
	se.postRecv(t)
	rep := pattern(iwarpPrivateData, 2)
	if err := srv.Accept(context.Background(), &ConnParam{PrivateData: append(rep, 0), ResponderResources: MaxResources, InitiatorDepth: MaxResources}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("Accept with %d bytes of private data: %v", len(rep)+1, err)
	}
	if err := srv.Accept(context.Background(), &ConnParam{PrivateData: rep, ResponderResources: MaxResources, InitiatorDepth: MaxResources}); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	est := next(t, cch, EventEstablished)
	if est.ID != cli || !bytes.Equal(est.PrivateData, rep) {
		t.Fatalf("client's ESTABLISHED: id %v, %d bytes of private data %x, want %x", est.ID, len(est.PrivateData), est.PrivateData, rep)
	}
	if ev := next(t, sch, EventEstablished); ev.ID != srv {
		t.Fatal("server's ESTABLISHED is for another id")
	}
	for _, ep := range []*endpoint{ce, se} {
		if st, err := ep.qp.Query(uverbs.QPAttrState); err != nil || st.State != ib.QPStateRTS && !siwUnreported(cli, st.State) {
			t.Fatalf("connected QP in %v (%v), want RTS", st.State, err)
		}
	}
	pingPong(t, ce, se, "ping over iWARP", "pong over iWARP")

	if err := cli.Disconnect(); err != nil {
		t.Fatalf("Disconnect: %v", err)
	}
	if ev := next(t, sch, EventDisconnected); ev.ID != srv {
		t.Fatal("DISCONNECTED for another id")
	}
	if err := srv.Disconnect(); err != nil {
		t.Fatalf("server's Disconnect: %v", err)
	}
	if ev := next(t, cch, EventDisconnected); ev.ID != cli {
		t.Fatal("client's DISCONNECTED for another id")
	}
}

// TestIntegrationSIWCMReject: on Soft-iWARP a rejected request reaches
// the client as REJECTED with ECONNRESET (siw's status for MPA's reject;
// there is no IB reject reason) and the server's 251 bytes of private
// data, exact; one byte more is refused with EINVAL. A request to a port
// nobody listens on is refused by TCP at once: siw connects within the
// call, so Connect itself fails with ECONNREFUSED (or, from a driver
// that connects later, a REJECTED event).
func TestIntegrationSIWCMReject(t *testing.T) {
	e := siwEnv(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, e.Addr)
	cli := peerID(t, e, cch, PortSpaceTCP, ib.QPTypeRC)
	resolve(t, cch, cli, dst)
	newEndpoint(t, cli)
	if err := peerConnect(t, e, cli, nil); err != nil {
		t.Fatal(err)
	}
	req := next(t, sch, EventConnectRequest)
	data := pattern(iwarpPrivateData, 3)
	if err := req.ID.Reject(append(data, 0)); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("Reject with %d bytes of private data: %v", len(data)+1, err)
	}
	if err := req.ID.Reject(data); err != nil {
		t.Fatalf("Reject: %v", err)
	}
	req.ID.Close()
	ev := next(t, cch, EventRejected)
	if !errors.Is(ev.Status, unix.ECONNRESET) && !errors.Is(ev.Status, unix.ECONNREFUSED) || !bytes.Equal(ev.PrivateData, data) {
		t.Fatalf("REJECTED status %v, %d bytes of private data %x, want %x", ev.Status, len(ev.PrivateData), ev.PrivateData, data)
	}

	none := netip.AddrPortFrom(e.Addr, dst.Port()+1)
	cli2 := peerID(t, e, cch, PortSpaceTCP, ib.QPTypeRC)
	resolve(t, cch, cli2, none)
	newEndpoint(t, cli2)
	start := time.Now()
	err := peerConnect(t, e, cli2, nil)
	if err == nil {
		err = next(t, cch, EventRejected).Status
	}
	if !errors.Is(err, unix.ECONNREFUSED) || time.Since(start) > 5*time.Second {
		t.Fatalf("connect to %v (nobody listens): %v after %v", none, err, time.Since(start))
	}
}

// TestIntegrationSIWCMEndpoint: on Soft-iWARP, our synchronous server
// (ListenEP, GetRequest, Accept) on siw0 and synchronous client
// (CreateEP in the peer namespace, Connect) exchange a message each way,
// and the client's Disconnect reaches the server.
func TestIntegrationSIWCMEndpoint(t *testing.T) {
	e := siwEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := &EPOptions{Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}
	l, err := ListenEP(netip.AddrPortFrom(e.Addr, 0).String(), 0, opts)
	if err != nil {
		t.Fatalf("ListenEP: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	la, err := l.QueryAddr()
	if err != nil {
		t.Fatal(err)
	}
	var cli *ID
	e.InPeer(t, func() { cli, err = CreateEP(ctx, la.Src.String(), opts) })
	if err != nil {
		t.Fatalf("CreateEP: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	ce := epBuffer(t, cli)
	ce.postRecv(t)
	// Connect (from the peer's namespace, peerConnect) waits for
	// ESTABLISHED, which needs the server's Accept.
	type accepted struct {
		child *ID
		data  []byte
		err   error
	}
	acc := make(chan accepted, 1)
	go func() {
		child, err := l.GetRequest(ctx)
		if err != nil {
			acc <- accepted{err: err}
			return
		}
		_, data := child.Request()
		acc <- accepted{child, data, child.Accept(ctx, nil)}
	}()
	var cerr error
	e.InPeer(t, func() {
		cerr = cli.Connect(ctx, &ConnParam{PrivateData: []byte("hello"), RetryCount: 7, RNRRetryCount: 7})
	})
	a := <-acc
	if a.child != nil {
		t.Cleanup(func() { a.child.Close() })
	}
	if a.err != nil || cerr != nil {
		t.Fatalf("GetRequest and Accept: %v; Connect: %v", a.err, cerr)
	}
	child := a.child
	if string(a.data) != "hello" {
		t.Fatalf("request's private data %q", a.data)
	}
	// iWARP has no RNR retry: the server's receive is posted before
	// anything is sent to it.
	se := epBuffer(t, child)
	se.postRecv(t)
	pingPong(t, ce, se, "from the client", "from the server")
	if err := cli.Disconnect(); err != nil {
		t.Fatalf("Disconnect: %v", err)
	}
	ev, err := child.Channel().GetEvent(ctx)
	if err != nil || ev.Type != EventDisconnected || ev.ID != child {
		t.Fatalf("server after the client's Disconnect: %v %v", ev, err)
	}
	ev.Ack()
}

// TestIntegrationSIWCMRefusals: what iWARP forbids fails at once with an
// error matching ErrNotSupported, never waits, and leaves nothing: a UD
// QP on a UDP id (EOPNOTSUPP, as the kernel answers rdma-core),
// the endpoint API's UD endpoint, a multicast join (ENOSYS, the kernel's
// answer), and SIDR, a UD id's Connect and Accept. An IPoIB id cannot
// bind to siw's netdev, and an RC id's join is EINVAL, as on RoCE.
func TestIntegrationSIWCMRefusals(t *testing.T) {
	e := siwEnv(t)
	ch := newChannel(t)
	quick := func(what string, f func() error, errno unix.Errno) {
		t.Helper()
		start := time.Now()
		err := f()
		if !errors.Is(err, ErrNotSupported) || !errors.Is(err, errno) || time.Since(start) > time.Second {
			t.Errorf("%s on iWARP: %v after %v, want ErrNotSupported and %v", what, err, time.Since(start), errno)
			return
		}
		t.Logf("%s: %v", what, err)
	}
	group := netip.MustParseAddr("239.1.1.1")
	// The IPoIB port space needs an IPoIB netdev: the kernel refuses to
	// bind its ids to any other (EINVAL, on RoCE too).
	ipoib, err := ch.CreateID(PortSpaceIPoIB, ib.QPTypeUD)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ipoib.Close() })
	if err := ipoib.Bind(netip.AddrPortFrom(e.Addr, 0)); !errors.Is(err, unix.EINVAL) || ipoib.Device() != nil {
		t.Errorf("an IPoIB id's Bind to siw0's address: %v (device %v), want EINVAL", err, ipoib.Device())
	}
	for _, ps := range []PortSpace{PortSpaceUDP} {
		id, err := ch.CreateID(ps, ib.QPTypeUD)
		if err != nil {
			t.Fatalf("CreateID %v: %v", ps, err)
		}
		t.Cleanup(func() { id.Close() })
		if err := id.Bind(netip.AddrPortFrom(e.Addr, 0)); err != nil {
			t.Fatalf("Bind %v id: %v", ps, err)
		}
		if id.Device() == nil || id.Device().Name() != e.Dev {
			t.Fatalf("%v id bound to %v", ps, id.Device())
		}
		quick(ps.String()+" id's UD QP", func() error {
			ctx, err := id.Device().Context()
			if err != nil {
				return err
			}
			pd, err := ctx.AllocPD()
			if err != nil {
				return err
			}
			defer pd.Close()
			cq, err := ctx.CreateCQ(uverbs.CQAttr{CQE: 4})
			if err != nil {
				return err
			}
			defer cq.Close()
			_, err = id.CreateQP(pd, uverbs.QPInit{SendCQ: cq, RecvCQ: cq, Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
			return err
		}, unix.EOPNOTSUPP)
		if id.QP() != nil {
			t.Fatalf("%v id holds a QP after a refused CreateQP", ps)
		}
		quick(ps.String()+" id's multicast join", func() error {
			_, err := id.JoinMulticast(context.Background(), group, false)
			return err
		}, unix.ENOSYS)
		quick(ps.String()+" id's send-only join", func() error {
			_, err := id.JoinMulticast(context.Background(), group, true)
			return err
		}, unix.ENOSYS)
		quick(ps.String()+" id's SIDR reply", func() error { return id.Accept(context.Background(), nil) }, unix.EOPNOTSUPP)
	}

	// SIDR: a UD id of the peer resolved to siw0.
	l, err := ch.CreateID(PortSpaceUDP, ib.QPTypeUD)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := l.Bind(netip.AddrPortFrom(e.Addr, 0)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(0); err != nil {
		t.Fatalf("a UDP id's Listen on iWARP: %v", err)
	}
	la, err := l.QueryAddr()
	if err != nil {
		t.Fatal(err)
	}
	cli := peerID(t, e, ch, PortSpaceUDP, ib.QPTypeUD)
	resolve(t, ch, cli, la.Src)
	quick("SIDR request", func() error { return peerConnect(t, e, cli, nil) }, unix.EOPNOTSUPP)
	quick("SIDR request with a QP number", func() error {
		return peerConnect(t, e, cli, &ConnParam{QPNum: 1, PrivateData: []byte("sidr")})
	}, unix.EOPNOTSUPP)

	// The endpoint API's UD endpoint: CreateEP fails and frees its id.
	quick("a UD endpoint", func() error {
		var ep *ID
		var err error
		e.InPeer(t, func() {
			ep, err = CreateEP(context.Background(), la.Src.String(), &EPOptions{PortSpace: PortSpaceUDP})
		})
		if ep != nil {
			ep.Close()
		}
		return err
	}, unix.EOPNOTSUPP)

	// An RC id cannot join anywhere.
	rc := newID(t, ch)
	if err := rc.Bind(netip.AddrPortFrom(e.Addr, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.JoinMulticast(context.Background(), group, false); !errors.Is(err, unix.EINVAL) || errors.Is(err, ErrNotSupported) {
		t.Errorf("an RC id's join: %v, want EINVAL", err)
	}
	// Nothing came on the channel for any of it.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if ev, err := ch.GetEvent(ctx); err == nil {
		t.Errorf("an event after the refusals: %v (status %v)", ev.Type, ev.Status)
		ev.Ack()
	}
}
