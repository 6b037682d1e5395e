package rsocket

import (
	"context"
	"errors"
	"fmt"
	"github.com/rdmastack/rdmastack/rdma"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// rsValidConnData is rsocket connection data that parses: what a C
// client sends in its REQ, though no QP or buffer stands behind it.
func rsValidConnData() []byte {
	cd := rsproto.ConnData{Version: rsproto.Version, Credits: 16,
		TargetSGL: rsproto.SGE{Addr: 0x10000, Key: 0x1234, Length: rsproto.SGLSize},
		DataBuf:   rsproto.SGE{Addr: 0x20000, Key: 0x1234, Length: 4096}}
	return cd.Marshal()
}

// rsRequest sends a connection request to dst from an id without a QP,
// on a channel of its own, with data as the REQ's private data, and
// returns the id once the request is sent, and when it was. Closing
// the id's channel destroys it.
func rsRequest(ctx context.Context, dst netip.AddrPort, data []byte) (*rdma.ID, time.Time, error) {
	ch, err := rdma.CreateEventChannel()
	if err != nil {
		return nil, time.Time{}, err
	}
	id, err := ch.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err == nil {
		err = id.ResolveAddr(ctx, netip.AddrPort{}, dst, 2*time.Second)
	}
	if err == nil {
		_, err = awaitEvent(ctx, id, rdma.EventAddrResolved)
	}
	if err == nil {
		err = id.ResolveRoute(ctx, 2*time.Second)
	}
	if err == nil {
		_, err = awaitEvent(ctx, id, rdma.EventRouteResolved)
	}
	sent := time.Now()
	if err == nil {
		// A QP number nothing on the device has (the listener's QP
		// never gets to send to it), a new one each time: the IB CM
		// rejects a REQ from a remote QP it knows as a stale connection.
		qpn := 0xF00000 + rsFakeQPN.Add(1)
		err = id.Connect(ctx, &rdma.ConnParam{PrivateData: data, QPNum: qpn, FlowControl: 1, RetryCount: 7, RNRRetryCount: 7})
	}
	if err != nil {
		return nil, sent, errors.Join(err, ch.Close())
	}
	return id, sent, nil
}

// rsFakeQPN numbers the QPs rsRequest announces.
var rsFakeQPN atomic.Uint32

// nextEvent is id's next event.
func nextEvent(ctx context.Context, id *rdma.ID) (*rdma.Event, error) {
	for {
		ev, err := id.Channel().GetEvent(ctx)
		if err != nil {
			return nil, err
		}
		ev.Ack()
		if ev.ID == id {
			return ev, nil
		}
	}
}

// stalledKind is a client that never completes its handshake.
type stalledKind int

const (
	// stallRTU sends valid rsocket connection data, takes the
	// CONNECT_RESPONSE and never sends the RTU.
	stallRTU stalledKind = iota
	// stallGarbage sends connection data that does not parse: too
	// short, or of another version.
	stallGarbage
	// stallGone sends valid connection data and destroys its id at
	// once: whatever the kernel still sends for it, the client says
	// nothing more.
	stallGone
)

// stalled starts a client of kind k to dst, and returns once it
// stalls: for stallRTU with its id, which got CONNECT_RESPONSE, and when
// it sent its REQ; for stallGarbage once it got REJECTED, which it must
// within timeout.
func stalled(ctx context.Context, k stalledKind, n int, dst netip.AddrPort, timeout time.Duration) (*rdma.ID, time.Time, error) {
	data := rsValidConnData()
	if k == stallGarbage {
		data = []byte("garbage!")
		if n%2 == 1 {
			data = append(rsValidConnData(), make([]byte, 16)...)
			data[0] = 0x55 // rsocket version 0x55
		}
	}
	id, sent, err := rsRequest(ctx, dst, data)
	if err != nil {
		return nil, sent, err
	}
	switch k {
	case stallGone:
		return nil, sent, id.Channel().Close()
	case stallRTU:
		if _, err := awaitEvent(ctx, id, rdma.EventConnectResponse); err != nil {
			return nil, sent, errors.Join(err, id.Channel().Close())
		}
		return id, sent, nil
	}
	ev, err := nextEvent(ctx, id)
	err = errors.Join(err, id.Channel().Close())
	switch {
	case err != nil:
		return nil, sent, err
	case ev.Type != rdma.EventRejected || !errors.Is(ev.Status, unix.ECONNREFUSED):
		return nil, sent, fmt.Errorf("garbage connection data %q answered by %v (%v)", data, ev.Type, ev.Status)
	case time.Since(sent) >= timeout:
		return nil, sent, fmt.Errorf("garbage connection data rejected after %v, the handshake timeout", time.Since(sent))
	}
	return nil, sent, nil
}

// rsObjects counts the kernel's objects on device dev.
func rsObjects(t *testing.T, nl *nldev.Client, dev uint32) map[nldev.ResourceType]uint64 {
	t.Helper()
	s, err := nl.ResourceSummaryOf(dev)
	if err != nil {
		t.Fatal(err)
	}
	m := map[nldev.ResourceType]uint64{}
	for _, c := range s.Counts {
		m[c.Type] = c.Count
	}
	return m
}

// rsConnObjects is what one Conn holds in the kernel: its cm_id, QP, CQ,
// PD and 3 MRs (send buffer, target SGL array, receive buffer).
var rsConnObjects = map[nldev.ResourceType]uint64{nldev.ResourceCMID: 1, nldev.ResourceQP: 1,
	nldev.ResourceCQ: 1, nldev.ResourcePD: 1, nldev.ResourceMR: 3}

// TestIntegrationRSAcceptStalled: 64 clients whose connection data does
// not parse are rejected at once; 64 that go away after their REQ end
// their handshakes when the kernel rejects for them; 64 that send valid
// rsocket connection data and never the RTU do not delay a good client:
// its Dial and Accept complete within 1s while their 64 handshakes are
// pending. Those are rejected at the handshake timeout (6s here, 12s
// with the race detector, several times what the 64 take to stall);
// afterwards the device holds only the good connection's objects and no
// goroutine is left. The kinds come in two waves so that the good
// client meets the listener waiting, not busy setting up 128 QPs on the
// guest's one CPU.
func TestIntegrationRSAcceptStalled(t *testing.T) {
	addr, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	const perKind = 64
	// The 64 stall within 0.9-1.3s under TCG, 2.6-3.8s with the race
	// detector; guests that share a loaded host take longer.
	timeout := 6 * time.Second
	if testenv.Race {
		timeout = 12 * time.Second
	}
	lc := ListenConfig{HandshakeTimeout: timeout, MaxHandshakes: 4 * perKind, KeepAlive: -1}
	l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dst := l.Addr().(*Addr).AddrPort()
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	objs0, g0 := rsObjects(t, nl, dev), runtime.NumGoroutine()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rtu []*rdma.ID
	var sent []time.Time
	t.Cleanup(func() {
		for _, id := range rtu {
			id.Channel().Close()
		}
	})
	// flood starts perKind clients of each kind at once, and returns
	// once all have stalled.
	flood := func(kinds ...stalledKind) {
		t.Helper()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		begun := time.Now()
		for _, k := range kinds {
			for n := range perKind {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id, at, err := stalled(ctx, k, n, dst, timeout)
					mu.Lock()
					defer mu.Unlock()
					if id != nil {
						rtu, sent = append(rtu, id), append(sent, at)
					}
					if err != nil {
						errs = append(errs, fmt.Errorf("stalled client %d of kind %d: %w", n, k, err))
					}
				}()
			}
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d clients of kinds %v stalled in %v", len(kinds)*perKind, kinds, time.Since(begun))
	}
	// The garbage is rejected at once; the clients that went away end
	// their handshakes when the kernel rejects for them, before the
	// timeout.
	flood(stallGarbage, stallGone)
	for deadline := time.Now().Add(timeout / 2); l.hs.inFlight() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d handshakes of clients that went away still pending", l.hs.inFlight())
		}
	}
	// Then the clients that stall before the RTU: the listener waits for
	// each.
	flood(stallRTU)
	if n := l.hs.inFlight(); len(rtu) != perKind || n != perKind {
		t.Fatalf("%d clients stalled before the RTU, %d handshakes pending; want %d", len(rtu), n, perKind)
	}

	// The good client, while the listener waits for 64 RTUs.
	begun := time.Now()
	gctx, gcancel := context.WithTimeout(context.Background(), time.Second)
	defer gcancel()
	accepted := make(chan error, 1)
	var srv *Conn
	go func() {
		var err error
		srv, err = l.AcceptConn(gctx)
		accepted <- err
	}()
	d := Dialer{KeepAlive: -1}
	cli, err := d.DialContext(gctx, "rdma", dst.String())
	aerr := <-accepted
	if err != nil || aerr != nil {
		if cli != nil {
			cli.Close()
		}
		if srv != nil {
			srv.Close()
		}
		t.Fatalf("the good client, %d handshakes pending, after %v: dial: %v; accept: %v", l.hs.inFlight(), time.Since(begun), err, aerr)
	}
	t.Cleanup(func() { cli.Close(); srv.Close() })
	t.Logf("the good client was accepted in %v with %d handshakes pending", time.Since(begun), l.hs.inFlight())
	if _, err := cli.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	srv.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := srv.Read(b); err != nil || string(b[:n]) != "ping" {
		t.Fatalf("the good connection carried %q, %v", b[:n], err)
	}

	// At the handshake timeout the listener gives up on each stalled
	// client: it rejects it, and the client hears of it.
	for i, id := range rtu {
		ev, err := nextEvent(ctx, id)
		if err != nil {
			t.Fatalf("stalled client %d waiting for its reject: %v", i, err)
		}
		if ev.Type != rdma.EventRejected {
			t.Fatalf("stalled client %d got %v (%v), want REJECTED", i, ev.Type, ev.Status)
		}
		if waited := time.Since(sent[i]); waited < timeout {
			t.Fatalf("stalled client %d rejected %v after its REQ, before the handshake timeout", i, waited)
		}
		id.Channel().Close()
	}

	t.Logf("the stalled clients were rejected %v after the good client", time.Since(begun))
	// Only the good connection's objects are left, on both its sides.
	want := map[nldev.ResourceType]uint64{}
	for typ, n := range objs0 {
		want[typ] = n + 2*rsConnObjects[typ]
	}
	// Its progress goroutines (no keepalives): a CQ and a CM loop each.
	const goroutines = 2 * 2
	var objs map[nldev.ResourceType]uint64
	var g, pending int
	for deadline := time.Now().Add(20 * time.Second); ; {
		objs, g, pending = rsObjects(t, nl, dev), runtime.NumGoroutine(), l.hs.inFlight()
		if fmt.Sprint(objs) == fmt.Sprint(want) && g <= g0+goroutines && pending == 0 {
			t.Logf("and nothing of them was left %v after the good client", time.Since(begun))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the handshake timeout: kernel objects %v, want %v; goroutines %d, want %d+%d; %d handshakes pending",
				objs, want, g, g0, goroutines, pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIntegrationRSAcceptBacklog: with MaxHandshakes 2 and two clients
// stalled before the RTU, a third request is rejected at once and a
// good Dial is refused; a stalled client that goes away frees its slot
// long before the handshake timeout, and a good Dial then succeeds;
// Close rejects the stalled client still pending and leaves nothing.
func TestIntegrationRSAcceptBacklog(t *testing.T) {
	addr, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	lc := ListenConfig{HandshakeTimeout: time.Minute, MaxHandshakes: 2, KeepAlive: -1}
	l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dst := l.Addr().(*Addr).AddrPort()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ids []*rdma.ID
	for i := range 2 {
		id, _, err := stalled(ctx, stallRTU, i, dst, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { id.Channel().Close() })
		ids = append(ids, id)
	}
	third, _, err := rsRequest(ctx, dst, rsValidConnData())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { third.Channel().Close() })
	if ev, err := nextEvent(ctx, third); err != nil || ev.Type != rdma.EventRejected {
		t.Fatalf("a third request with 2 pending: %v, %v; want REJECTED", ev, err)
	}
	var d Dialer
	if c, err := d.DialContext(ctx, "rdma", dst.String()); !errors.Is(err, unix.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a Dial with 2 pending: %v, want ECONNREFUSED", err)
	}

	// The first stalled client goes away: the kernel rejects its
	// connection, and the handshake ends.
	ids[0].Channel().Close()
	for deadline := time.Now().Add(10 * time.Second); l.hs.inFlight() != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d handshakes pending 10s after a client went away", l.hs.inFlight())
		}
	}
	cli, srv := rsPair(t, l, &Dialer{KeepAlive: -1})
	if _, err := cli.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}

	// Close abandons the handshake still pending: its client is
	// rejected.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if ev, err := nextEvent(ctx, ids[1]); err != nil || ev.Type != rdma.EventRejected {
		t.Fatalf("a stalled client when the listener closed: %v, %v; want REJECTED", ev, err)
	}
	if n := l.hs.inFlight(); n != 0 {
		t.Fatalf("%d handshakes pending after Close", n)
	}
}
