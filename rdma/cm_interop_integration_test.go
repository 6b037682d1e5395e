package rdma

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// ucmatose's defaults: port 7471; we ask for 2 messages of 64 bytes.
const (
	ucmatosePort  = 7471
	ucmatoseCount = 2
	ucmatoseSize  = 64
)

// startUcmatose runs rdma-core's ucmatose and returns a function that
// waits for it to exit and returns what it printed.
func startUcmatose(t *testing.T, args ...string) func() string {
	t.Helper()
	path := testenv.Oracle(t, "ucmatose")
	args = append(args, "-C", "2", "-S", "64")
	cmd := exec.Command(path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	return func() string {
		select {
		case err := <-done:
			done <- err
			if err != nil {
				t.Fatalf("ucmatose %s: %v\n%s", strings.Join(args, " "), err, out.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("ucmatose %s did not exit\n%s", strings.Join(args, " "), out.String())
		}
		if !strings.Contains(out.String(), "test complete") {
			t.Fatalf("ucmatose %s:\n%s", strings.Join(args, " "), out.String())
		}
		return out.String()
	}
}

// exchange is ucmatose's data phase as the side that receives first
// (client) or sends first (server): ucmatoseCount messages each way.
func (e *endpoint) exchange(t *testing.T, sendFirst bool) {
	t.Helper()
	recv := func() {
		for range ucmatoseCount {
			if wc := e.poll(t); wc.Opcode != uverbs.WCRecv || wc.ByteLen != ucmatoseSize {
				t.Fatalf("received %v of %d bytes", wc.Opcode, wc.ByteLen)
			}
		}
	}
	send := func() {
		for range ucmatoseCount {
			e.send(t, strings.Repeat("x", ucmatoseSize))
			if wc := e.poll(t); wc.Opcode != uverbs.WCSend {
				t.Fatalf("send completed as %v", wc.Opcode)
			}
		}
	}
	if sendFirst {
		send()
		recv()
	} else {
		recv()
		send()
	}
}

func (e *endpoint) postRecvs(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		if err := e.qp.PostRecv(&uverbs.RecvWR{ID: uint64(i), SGE: []uverbs.SGE{{Addr: e.buf.Addr(2048 + 512*i), Length: 512, LKey: e.mr.LKey()}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// dialUntilListening connects a new id (made by newID) to a tool that
// starts listening some time after it was started: an event notYet
// accepts means it does not listen yet, and the dial is tried again. Each
// try's endpoint has recvs receives posted before it connects. It returns
// the connected id, its endpoint and its ESTABLISHED event.
func dialUntilListening(t *testing.T, ch *EventChannel, newID func(*testing.T, *EventChannel) *ID, dst netip.AddrPort,
	recvs int, param *ConnParam, notYet func(*Event) bool) (*ID, *endpoint, *Event) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		cli := newID(t, ch)
		resolve(t, ch, cli, dst)
		ce := newEndpoint(t, cli)
		ce.postRecvs(t, recvs)
		if err := cli.Connect(context.Background(), param); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ev, err := ch.GetEvent(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		ev.Ack()
		if ev.Type == EventEstablished {
			return cli, ce, ev
		}
		if !notYet(ev) || time.Now().After(deadline) {
			t.Fatalf("connecting to %v: %v %v", dst, ev.Type, ev.Status)
		}
		cli.Close()
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIntegrationCMUcmatoseServer: our client against `ucmatose -b`.
func TestIntegrationCMUcmatoseServer(t *testing.T) {
	addr, _ := rxeAddr(t)
	wait := startUcmatose(t, "-b", addr.String())
	ch := newChannel(t)
	dst := netip.AddrPortFrom(addr, ucmatosePort)
	// Until ucmatose listens, connecting is rejected (invalid service ID).
	cli, ce, _ := dialUntilListening(t, ch, newID, dst, ucmatoseCount,
		&ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 5, RNRRetryCount: 7},
		func(ev *Event) bool { return ev.Type == EventRejected && errors.Is(ev.Status, RejectInvalidServiceID) })
	ce.exchange(t, false)
	next(t, ch, EventDisconnected) // ucmatose's server disconnects
	if err := cli.Disconnect(); err != nil {
		t.Fatal(err)
	}
	wait()
}

// TestIntegrationCMUcmatoseClient: `ucmatose -s` against our server.
func TestIntegrationCMUcmatoseClient(t *testing.T) {
	addr, _ := rxeAddr(t)
	ch := newChannel(t)
	l := newID(t, ch)
	if err := l.Bind(netip.AddrPortFrom(addr, ucmatosePort)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(0); err != nil {
		t.Fatal(err)
	}
	wait := startUcmatose(t, "-s", addr.String())
	req := next(t, ch, EventConnectRequest)
	srv := req.ID
	t.Cleanup(func() { srv.Close() })
	if req.Peer.RNRRetryCount != 0 || req.Peer.InitiatorDepth != 1 {
		t.Fatalf("ucmatose's request: %+v", req.Peer)
	}
	se := newEndpoint(t, srv)
	se.postRecvs(t, ucmatoseCount)
	if err := srv.Accept(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	next(t, ch, EventEstablished)
	se.exchange(t, true)
	if err := srv.Disconnect(); err != nil {
		t.Fatal(err)
	}
	next(t, ch, EventDisconnected)
	wait()
}

// TestIntegrationCMSync: a synchronous client (no channel of its own to
// read) whose calls return when their events have come.
func TestIntegrationCMSync(t *testing.T) {
	addr, _ := rxeAddr(t)
	sch := newChannel(t)
	_, dst := listen(t, sch, addr)
	cli, err := CreateID(PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cli.ResolveAddr(ctx, netip.AddrPort{}, dst, 2*time.Second); err != nil {
		t.Fatalf("sync ResolveAddr: %v", err)
	}
	if err := cli.ResolveRoute(ctx, 2*time.Second); err != nil {
		t.Fatalf("sync ResolveRoute: %v", err)
	}
	ce := newEndpoint(t, cli)
	connected := make(chan error, 1)
	go func() { connected <- cli.Connect(ctx, nil) }()
	req := next(t, sch, EventConnectRequest)
	t.Cleanup(func() { req.ID.Close() })
	newEndpoint(t, req.ID)
	if err := req.ID.Accept(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := <-connected; err != nil {
		t.Fatalf("sync Connect: %v", err)
	}
	if st, err := ce.qp.Query(uverbs.QPAttrState); err != nil || st.State != ib.QPStateRTS {
		t.Fatalf("sync client's QP in %v (%v)", st.State, err)
	}
	next(t, sch, EventEstablished)

	// A synchronous Connect to nobody fails with the reject.
	cli2, err := CreateID(PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli2.Close() })
	none := netip.AddrPortFrom(addr, dst.Port()+1)
	if err := cli2.ResolveAddr(ctx, netip.AddrPort{}, none, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := cli2.ResolveRoute(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	newEndpoint(t, cli2)
	if err := cli2.Connect(ctx, nil); !errors.Is(err, RejectInvalidServiceID) {
		t.Fatalf("sync Connect to nobody: %v", err)
	}
}
