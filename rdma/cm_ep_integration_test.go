package rdma

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// epBuffer registers a buffer in an endpoint's PD.
func epBuffer(t *testing.T, id *ID) *endpoint {
	t.Helper()
	if id.QP() == nil || id.PD() == nil || id.CQ() == nil {
		t.Fatalf("endpoint without QP %v, PD %v or CQ %v", id.QP(), id.PD(), id.CQ())
	}
	buf, err := membuf.New(4096)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := buf.Register(id.PD(), uverbs.AccessLocalWrite)
	if err != nil {
		buf.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close(); buf.Close() })
	return &endpoint{pd: id.PD(), qp: id.QP(), cq: id.CQ(), buf: buf, mr: mr}
}

// TestIntegrationCMEndpoint: our synchronous server (ListenEP,
// GetRequest, Accept) and synchronous client (CreateEP, Connect)
// exchange a message each way, as rdma_server and rdma_client do.
func TestIntegrationCMEndpoint(t *testing.T) {
	addr, _ := rxeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := &EPOptions{Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}
	l, err := ListenEP(netip.AddrPortFrom(addr, 0).String(), 0, opts)
	if err != nil {
		t.Fatalf("ListenEP: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	la, err := l.QueryAddr()
	if err != nil {
		t.Fatal(err)
	}

	cli, err := CreateEP(ctx, la.Src.String(), opts)
	if err != nil {
		t.Fatalf("CreateEP: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	ce := epBuffer(t, cli)
	ce.postRecv(t)
	// Connect waits for ESTABLISHED, which needs the server's Accept.
	connected := make(chan error, 1)
	go func() {
		connected <- cli.Connect(ctx, &ConnParam{PrivateData: []byte("hello"), RetryCount: 7, RNRRetryCount: 7})
	}()

	child, err := l.GetRequest(ctx)
	if err != nil {
		t.Fatalf("GetRequest: %v", err)
	}
	t.Cleanup(func() { child.Close() })
	if child.Channel() == l.Channel() {
		t.Fatal("the request's id shares the listener's channel")
	}
	if _, data := child.Request(); len(data) < 5 || string(data[:5]) != "hello" {
		t.Fatalf("request's private data %q", data)
	}
	se := epBuffer(t, child)
	se.postRecv(t)
	if err := child.Accept(ctx, nil); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if err := <-connected; err != nil {
		t.Fatalf("Connect: %v", err)
	}

	ce.send(t, "from the client")
	if wc := ce.poll(t); wc.Opcode != uverbs.WCSend {
		t.Fatalf("client's send completed as %v", wc.Opcode)
	}
	if wc := se.poll(t); wc.Opcode != uverbs.WCRecv || string(se.buf.Bytes()[2048:2048+wc.ByteLen]) != "from the client" {
		t.Fatalf("server received %v %q", wc.Opcode, se.buf.Bytes()[2048:2048+wc.ByteLen])
	}
	se.send(t, "from the server")
	if wc := se.poll(t); wc.Opcode != uverbs.WCSend {
		t.Fatalf("server's send completed as %v", wc.Opcode)
	}
	if wc := ce.poll(t); wc.Opcode != uverbs.WCRecv || string(ce.buf.Bytes()[2048:2048+wc.ByteLen]) != "from the server" {
		t.Fatalf("client received %v %q", wc.Opcode, ce.buf.Bytes()[2048:2048+wc.ByteLen])
	}
	if _, err := DialEP(ctx, "no-such-host.invalid:7471", nil); err == nil {
		t.Fatal("DialEP to an unknown host succeeds")
	}
	if _, err := newID(t, newChannel(t)).GetRequest(ctx); err == nil {
		t.Fatal("GetRequest on an id of a shared channel succeeds")
	}
}

// TestIntegrationCMMigrate: an id with an event queued moves to another
// channel; the event, and the id's later ones, come there.
func TestIntegrationCMMigrate(t *testing.T) {
	addr, _ := rxeAddr(t)
	ch1, ch2 := newChannel(t), newChannel(t)
	id := newID(t, ch1)
	if err := id.ResolveAddr(context.Background(), netip.AddrPort{}, netip.AddrPortFrom(addr, 1), time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // ADDR_RESOLVED is queued on ch1
	if err := id.Migrate(ch2); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if id.Channel() != ch2 {
		t.Fatal("the id is not on its new channel")
	}
	if ev := next(t, ch2, EventAddrResolved); ev.ID != id {
		t.Fatal("ADDR_RESOLVED for another id")
	}
	if err := id.ResolveRoute(context.Background(), time.Second); err != nil {
		t.Fatalf("ResolveRoute after Migrate: %v", err)
	}
	next(t, ch2, EventRouteResolved)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if ev, err := ch1.GetEvent(ctx); err == nil {
		t.Fatalf("the old channel got %v", ev.Type)
	}
	if err := id.Migrate(nil); err != nil {
		t.Fatalf("Migrate to its own channel: %v", err)
	}
	if id.Channel() == ch2 {
		t.Fatal("Migrate(nil) left the id on its channel")
	}
	if err := id.Close(); err != nil {
		t.Fatal(err)
	}
}
