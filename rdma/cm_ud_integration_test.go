package rdma

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// grhLen is the Global Routing Header a UD receive buffer holds before
// the datagram.
const grhLen = 40

// listenUD makes a UD listener on addr:port (0: a free one).
func listenUD(t *testing.T, ch *EventChannel, addr netip.Addr) (*ID, netip.AddrPort) {
	t.Helper()
	l := newUDID(t, ch)
	if err := l.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		t.Fatalf("Bind: %v", err)
	}
	if err := l.Listen(0); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	a, err := l.QueryAddr()
	if err != nil || a.Src.Port() == 0 {
		t.Fatalf("UD listener's address %v: %v", a.Src, err)
	}
	return l, a.Src
}

// sendUD posts msg with the client's QPN as immediate data (as udaddy
// does) to the peer an ESTABLISHED or MULTICAST_JOIN event names, through
// an address handle made from the event's attributes.
func (e *endpoint) sendUD(t *testing.T, peer PeerParam, msg string) {
	t.Helper()
	ah, err := e.pd.CreateAH(peer.AH)
	if err != nil {
		t.Fatalf("CreateAH(%+v): %v", peer.AH, err)
	}
	t.Cleanup(func() { ah.Close() })
	n := copy(e.buf.Bytes(), msg)
	if err := e.qp.PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpSendWithImm, Flags: uverbs.SendSignaled, Imm: e.qp.Num(),
		SGE: []uverbs.SGE{{Addr: e.buf.Addr(0), Length: uint32(n), LKey: e.mr.LKey()}},
		AH:  ah, RemoteQPN: peer.QPNum, RemoteQKey: peer.QKey}); err != nil {
		t.Fatalf("PostSend: %v", err)
	}
}

// TestIntegrationCMUD: a UD id pair over SIDR: the request's private
// data, the reply's QPN, qkey and address, a datagram through an address
// handle made from ESTABLISHED; then a rejected request and one to a port
// nobody listens on.
func TestIntegrationCMUD(t *testing.T) {
	addr, _ := rxeAddr(t)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listenUD(t, sch, addr)

	cli := newUDID(t, cch)
	resolve(t, cch, cli, dst)
	ce := newEndpoint(t, cli)
	if err := cli.Connect(context.Background(), &ConnParam{PrivateData: []byte("sidr request")}); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	req := next(t, sch, EventConnectRequest)
	srv := req.ID
	t.Cleanup(func() { srv.Close() })
	if !bytes.HasPrefix(req.PrivateData, []byte("sidr request")) || len(req.PrivateData) != ucma.ConnectPrivateDataUDP {
		t.Fatalf("SIDR REQ private data %q (%d bytes)", req.PrivateData, len(req.PrivateData))
	}
	se := newEndpoint(t, srv)
	se.postRecv(t)
	if err := srv.Accept(context.Background(), &ConnParam{PrivateData: []byte("sidr reply")}); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	est := next(t, cch, EventEstablished)
	if est.ID != cli || est.Peer.QPNum != se.qp.Num() || est.Peer.QKey != ucma.RDMA_UDP_QKEY || !est.Peer.AH.IsGlobal ||
		est.Peer.AH.Port != 1 || !bytes.HasPrefix(est.PrivateData, []byte("sidr reply")) {
		t.Fatalf("UD ESTABLISHED: %+v, data %q; server QP %d", est.Peer, est.PrivateData, se.qp.Num())
	}
	ce.sendUD(t, est.Peer, "one datagram")
	if wc := ce.poll(t); wc.Opcode != uverbs.WCSend {
		t.Fatalf("send completed as %v", wc.Opcode)
	}
	wc := se.poll(t)
	got := se.buf.Bytes()[2048+grhLen : 2048+wc.ByteLen]
	if wc.Opcode != uverbs.WCRecv || wc.ByteLen != grhLen+12 || string(got) != "one datagram" ||
		wc.Imm != ce.qp.Num() || wc.SrcQP != ce.qp.Num() {
		t.Fatalf("server received %v %q (%d bytes) imm %d from QP %d; client QP %d", wc.Opcode, got, wc.ByteLen, wc.Imm, wc.SrcQP, ce.qp.Num())
	}

	// A rejected SIDR request: UNREACHABLE with SIDR status 2.
	cli2 := newUDID(t, cch)
	resolve(t, cch, cli2, dst)
	newEndpoint(t, cli2)
	if err := cli2.Connect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	req = next(t, sch, EventConnectRequest)
	if err := req.ID.Reject(nil); err != nil {
		t.Fatalf("UD Reject: %v", err)
	}
	req.ID.Close()
	var st SIDRStatus
	if ev := next(t, cch, EventUnreachable); !errors.As(ev.Status, &st) || st != 2 {
		t.Fatalf("rejected SIDR request: status %v, want SIDR status 2", ev.Status)
	}

	// Nobody listens: SIDR status 1.
	cli3 := newUDID(t, cch)
	resolve(t, cch, cli3, netip.AddrPortFrom(addr, dst.Port()+1))
	newEndpoint(t, cli3)
	if err := cli3.Connect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, cch, EventUnreachable); !errors.As(ev.Status, &st) || st != 1 {
		t.Fatalf("SIDR request to a port nobody listens on: status %v, want SIDR status 1", ev.Status)
	}
}

// TestIntegrationCMUdaddyServer: our UD client against rdma-core's
// `udaddy -b ADDR` (port 7174): udaddyCount datagrams each way.
func TestIntegrationCMUdaddyServer(t *testing.T) {
	const port, count, size = 7174, 2, 64
	addr, _ := rxeAddr(t)
	args := []string{"-b", addr.String(), "-C", fmt.Sprint(count), "-S", fmt.Sprint(size)}
	cmd := exec.Command(testenv.Oracle(t, "udaddy"), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })

	ch := newChannel(t)
	dst := netip.AddrPortFrom(addr, port)
	// Until udaddy listens, the SIDR request finds nobody (status 1).
	_, ce, est := dialUntilListening(t, ch, newUDID, dst, count, nil, func(ev *Event) bool {
		var st SIDRStatus
		return ev.Type == EventUnreachable && errors.As(ev.Status, &st) && st == 1
	})
	for range count {
		ce.sendUD(t, est.Peer, strings.Repeat("u", size))
	}
	recvs := 0
	for range 2 * count {
		switch wc := ce.poll(t); {
		case wc.Opcode == uverbs.WCRecv && wc.ByteLen == grhLen+size:
			recvs++
		case wc.Opcode != uverbs.WCSend:
			t.Fatalf("udaddy's reply: %v of %d bytes", wc.Opcode, wc.ByteLen)
		}
	}
	if recvs != count {
		t.Fatalf("%d replies from udaddy, want %d", recvs, count)
	}
	select {
	case err := <-done:
		done <- err
		if err != nil || !strings.Contains(out.String(), "test complete") {
			t.Fatalf("udaddy %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("udaddy did not exit\n%s", out.String())
	}
}
