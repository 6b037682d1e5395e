package rsocket

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"golang.org/x/net/nettest"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// rsListen listens on rxe0's address, on a free port.
func rsListen(t testing.TB) (*Listener, netip.Addr) {
	t.Helper()
	addr, _ := rxetest.Addr(t)
	l, err := Listen("rdma", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if a, ok := l.Addr().(*Addr); !ok || a.AddrPort().Addr() != addr || a.AddrPort().Port() == 0 || a.Network() != "rdma" {
		t.Fatalf("listener address %v", l.Addr())
	}
	return l, addr
}

// rsSetup is where a test's Conns run: rxe0 (rxeSetup), or siw
// (siwSetup), the listener in the root namespace and the dialer in the
// peer's.
type rsSetup struct {
	listen  func(t testing.TB) *Listener
	pairErr func(l *Listener, d *Dialer) (cli, srv *Conn, err error)
}

var rxeSetup = rsSetup{listen: func(t testing.TB) *Listener { l, _ := rsListen(t); return l }, pairErr: rsPairErr}

// pair is rsPair in s.
func (s rsSetup) pair(t *testing.T, l *Listener, d *Dialer) (cli, srv *Conn) {
	t.Helper()
	cli, srv, err := s.pairErr(l, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close(); srv.Close() })
	return cli, srv
}

// rsPair connects a Conn to l, and returns the dialled and the accepted
// ends.
func rsPair(t *testing.T, l *Listener, d *Dialer) (cli, srv *Conn) {
	t.Helper()
	cli, srv, err := rsPairErr(l, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close(); srv.Close() })
	return cli, srv
}

func rsPairErr(l *Listener, d *Dialer) (cli, srv *Conn, err error) {
	return rsPairTo(l, d, "rdma", l.Addr().String())
}

// rsPairTo is rsPairErr dialling network and address.
func rsPairTo(l *Listener, d *Dialer, network, address string) (cli, srv *Conn, err error) {
	if d == nil {
		d = &Dialer{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type accepted struct {
		c   *Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := l.AcceptConn(ctx)
		ch <- accepted{c, err}
	}()
	cli, err = d.DialContext(ctx, network, address)
	if err != nil {
		cancel() // no client comes: the accept need not wait
	}
	a := <-ch
	if err != nil || a.err != nil {
		if cli != nil {
			cli.Close()
		}
		if a.c != nil {
			a.c.Close()
		}
		return nil, nil, errors.Join(err, a.err)
	}
	return cli, a.c, nil
}

// TestIntegrationRSNettest runs x/net's conformance tests of net.Conn on
// pairs of our Conns.
func TestIntegrationRSNettest(t *testing.T) { testNettest(t, rxeSetup) }

func testNettest(t *testing.T, s rsSetup) {
	l := s.listen(t)
	nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
		cli, srv, err := s.pairErr(l, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		return cli, srv, func() { cli.Close(); srv.Close() }, nil
	})
}

// TestIntegrationRSAddrs: each end's addresses are the other's, on rxe0's
// address, and the dialled port is the listener's.
func TestIntegrationRSAddrs(t *testing.T) {
	l, addr := rsListen(t)
	cli, srv := rsPair(t, l, nil)
	la, ra := cli.LocalAddr().(*Addr), cli.RemoteAddr().(*Addr)
	if ra.AddrPort() != l.Addr().(*Addr).AddrPort() || la.AddrPort().Addr() != addr || la.AddrPort().Port() == 0 {
		t.Fatalf("client %v → %v, listener %v", la, ra, l.Addr())
	}
	if srv.LocalAddr().String() != ra.String() || srv.RemoteAddr().String() != la.String() {
		t.Fatalf("server %v → %v, client %v → %v", srv.LocalAddr(), srv.RemoteAddr(), la, ra)
	}
	// A Dialer's LocalAddr binds the client: its port is the one asked.
	local := *AddrFromAddrPort(netip.AddrPortFrom(addr, 7490)) // a value is a net.Addr too
	cli2, srv2 := rsPair(t, l, &Dialer{LocalAddr: local})
	if cli2.LocalAddr().String() != local.String() || srv2.RemoteAddr().String() != local.String() {
		t.Fatalf("bound to %v: client from %v, server sees %v", local, cli2.LocalAddr(), srv2.RemoteAddr())
	}
}

// TestIntegrationRSHalfClose: CloseWrite is rsocket's SHUT_WR: the peer
// reads everything, then io.EOF, and can still answer.
func TestIntegrationRSHalfClose(t *testing.T) { testHalfClose(t, rxeSetup) }

func testHalfClose(t *testing.T, s rsSetup) {
	l := s.listen(t)
	cli, srv := s.pair(t, l, nil)
	msg := bytes.Repeat([]byte("half-close "), 1000)
	if _, err := cli.Write(msg); err != nil {
		t.Fatal(err)
	}
	if err := cli.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Write([]byte("x")); !errors.Is(err, unix.EPIPE) {
		t.Fatalf("Write after CloseWrite: %v, want EPIPE", err)
	}
	got, err := io.ReadAll(srv)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("server read %d bytes, %v; want %d", len(got), err, len(msg))
	}
	if _, err := srv.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(cli)
	if err != nil || string(got) != "reply" {
		t.Fatalf("client read %q, %v", got, err)
	}
}

// TestIntegrationRSDeadlines: a blocked Read, and a Write blocked because
// the peer does not read (its credits are used up), end at their deadline
// with a timeout error; the connection then still works.
func TestIntegrationRSDeadlines(t *testing.T) { testDeadlines(t, rxeSetup) }

func testDeadlines(t *testing.T, s rsSetup) {
	l := s.listen(t)
	cli, srv := s.pair(t, l, nil)
	isTimeout := func(err error) bool {
		var ne net.Error
		return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
	}
	cli.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	start := time.Now()
	if n, err := cli.Read(make([]byte, 10)); n != 0 || !isTimeout(err) {
		t.Fatalf("blocked Read: %d, %v", n, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("Read timed out after %v", d)
	}
	cli.SetReadDeadline(time.Time{})

	cli.SetWriteDeadline(time.Now().Add(time.Second))
	total, buf := 0, make([]byte, 64<<10)
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		var n int
		n, err = cli.Write(buf)
		total += n
	}
	if !isTimeout(err) {
		t.Fatalf("Write to a peer that does not read: %d bytes, %v", total, err)
	}
	// Our send buffer and the peer's receive buffer: 128 KiB each.
	if total < 128<<10 || total > 512<<10 {
		t.Fatalf("wrote %d bytes before blocking", total)
	}
	cli.SetWriteDeadline(time.Time{})
	got := make([]byte, total)
	if _, err := io.ReadFull(srv, got); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(srv, got[:5]); err != nil || string(got[:5]) != "after" {
		t.Fatalf("read %q, %v", got[:5], err)
	}
}

// TestIntegrationRSCloseWakes: Close wakes a blocked Read with
// net.ErrClosed, and the peer then reads io.EOF (rsocket's DISCONNECT);
// Close wakes a blocked Write, and Listener.Close a blocked Accept.
func TestIntegrationRSCloseWakes(t *testing.T) { testCloseWakes(t, rxeSetup) }

func testCloseWakes(t *testing.T, s rsSetup) {
	l := s.listen(t)
	cli, srv := s.pair(t, l, nil)
	done := make(chan error, 1)
	go func() {
		_, err := cli.Read(make([]byte, 1))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read woken by Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake Read")
	}
	srv.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := srv.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("peer's Read after Close: %d, %v", n, err)
	}
	if _, err := srv.Write([]byte("x")); err == nil {
		t.Fatal("Write to a closed peer succeeded")
	}

	// A Write blocked on a peer that does not read.
	cli2, _ := s.pair(t, l, nil)
	werr := fill(cli2)
	if err := cli2.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-werr:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Write woken by Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake Write")
	}

	go func() {
		_, err := l.Accept()
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	l.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept woken by Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake Accept")
	}
}

// TestIntegrationRSKeepAlive: keepalive probes (0-byte RDMA writes) every
// 20ms for a while leave both ends working.
func TestIntegrationRSKeepAlive(t *testing.T) { testKeepAlive(t, rxeSetup) }

func testKeepAlive(t *testing.T, s rsSetup) {
	l := s.listen(t)
	cli, srv := s.pair(t, l, &Dialer{KeepAlive: 20 * time.Millisecond})
	time.Sleep(500 * time.Millisecond)
	for _, p := range [][2]*Conn{{cli, srv}, {srv, cli}} {
		if _, err := p[0].Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(p[1], b); err != nil || string(b) != "ping" {
			t.Fatalf("read %q, %v", b, err)
		}
	}
}

// TestIntegrationRSRefused: dialling a port nobody listens on fails with
// an error matching ECONNREFUSED.
func TestIntegrationRSRefused(t *testing.T) {
	addr, _ := rxetest.Addr(t)
	_, err := Dial("rdma4", netip.AddrPortFrom(addr, 1).String())
	var oe *net.OpError
	if !errors.Is(err, unix.ECONNREFUSED) || !errors.As(err, &oe) || oe.Op != "dial" {
		t.Fatalf("Dial to no listener: %v", err)
	}
	if _, err := Dial("tcp", "1.2.3.4:5"); err == nil {
		t.Fatal("Dial on network tcp")
	}
	if _, err := Dial("rdma6", netip.AddrPortFrom(addr, 1).String()); err == nil {
		t.Fatal("rdma6 Dial to an IPv4 address")
	}
}

// TestIntegrationRSLeak: 1,000 dial/close cycles (100 under the race
// detector) leave no fd, goroutine or cm_id behind.
func TestIntegrationRSLeak(t *testing.T) {
	_, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	l, _ := rsListen(t)
	cycles := testenv.Repeats(1000)
	start := time.Now()
	for i := range cycles {
		cli, srv, err := rsPairErr(l, nil)
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if _, err := cli.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := srv.Read(b); err != nil || b[0] != byte(i) {
			t.Fatalf("cycle %d: read %v, %v", i, b, err)
		}
		if err := errors.Join(cli.Close(), srv.Close()); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
	}
	t.Logf("%d dial/close cycles in %v", cycles, time.Since(start))
}

// TestIntegrationRSIdle: an idle pair, one end blocked in Read, costs no
// CPU: its goroutines are parked in the netpoller, not polling.
func TestIntegrationRSIdle(t *testing.T) {
	l, _ := rsListen(t)
	cli, srv := rsPair(t, l, nil)
	done := make(chan error, 1)
	go func() {
		_, err := srv.Read(make([]byte, 1))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	before := testenv.SelfCPU(t)
	time.Sleep(time.Second)
	if used := testenv.SelfCPU(t) - before; used > 100*time.Millisecond {
		t.Fatalf("an idle connection used %v of CPU in 1s", used)
	}
	if _, err := cli.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
