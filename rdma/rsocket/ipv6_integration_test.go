package rsocket

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// ipv6Addrs are the IPv6 addresses the tests take in turn: rxe0's global
// one and its link-local one, zoned with the netdev's name.
var ipv6Addrs = []struct {
	name string
	addr func(testing.TB) (netip.Addr, uint32)
}{{"global", rxetest.Addr6}, {"link-local", rxetest.LinkLocal}}

// isAddr says whether a is the *Addr of ap, zone included.
func isAddr(a net.Addr, ap netip.AddrPort) bool {
	x, ok := a.(*Addr)
	return ok && x.AddrPort() == ap
}

// pair6 dials network to address, and returns the dialled end and l's
// accepted one.
func pair6(t *testing.T, l *Listener, d *Dialer, network, address string) (cli, srv *Conn) {
	t.Helper()
	cli, srv, err := rsPairTo(l, d, network, address)
	if err != nil {
		t.Fatalf("dial %s %s: %v", network, address, err)
	}
	t.Cleanup(func() { cli.Close(); srv.Close() })
	return cli, srv
}

// exchange sends n bytes each way, at once, and checks they arrive.
func exchange(t *testing.T, a, b *Conn, n int) {
	t.Helper()
	one := func(from, to *Conn, seed byte) error {
		msg := bytes.Repeat([]byte{seed, seed + 1, seed + 2}, n/3+1)[:n]
		errc := make(chan error, 1)
		go func() {
			_, err := from.Write(msg)
			errc <- err
		}()
		got := make([]byte, n)
		to.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.ReadFull(to, got); err != nil {
			return err
		}
		if !bytes.Equal(got, msg) {
			return io.ErrUnexpectedEOF
		}
		return <-errc
	}
	errs := make(chan error, 2)
	go func() { errs <- one(a, b, 1) }()
	go func() { errs <- one(b, a, 101) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("exchange between %v and %v: %v", a.LocalAddr(), b.LocalAddr(), err)
		}
	}
}

// TestIntegrationRSIPv6: rdma6 over rxe0's global IPv6 address and over
// its link-local one with a named zone: data both ways, each end's
// addresses the other's, zones by name; a Dialer's zoned LocalAddr binds.
func TestIntegrationRSIPv6(t *testing.T) {
	for _, c := range ipv6Addrs {
		t.Run(c.name, func(t *testing.T) {
			addr, dev := c.addr(t)
			checkNoLeaks(t, &dev)
			l, err := Listen("rdma6", netip.AddrPortFrom(addr, 0).String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			la, ok := l.Addr().(*Addr)
			if !ok || la.AddrPort().Addr() != addr || la.AddrPort().Port() == 0 {
				t.Fatalf("listener on %v: %v", addr, l.Addr())
			}
			cli, srv := pair6(t, l, nil, "rdma6", la.String())
			exchange(t, cli, srv, 256<<10)
			cl, cr := cli.LocalAddr().(*Addr), cli.RemoteAddr().(*Addr)
			if cr.AddrPort() != la.AddrPort() || cl.AddrPort().Addr() != addr || cl.AddrPort().Port() == 0 {
				t.Fatalf("client %v → %v, listener %v", cl, cr, la)
			}
			if !isAddr(srv.LocalAddr(), la.AddrPort()) || !isAddr(srv.RemoteAddr(), cl.AddrPort()) {
				t.Fatalf("server %v → %v, client %v → %v", srv.LocalAddr(), srv.RemoteAddr(), cl, cr)
			}
			t.Logf("client %v → %v, server %v → %v", cl, cr, srv.LocalAddr(), srv.RemoteAddr())

			// A zoned local address, given as a *net.TCPAddr too.
			local := netip.AddrPortFrom(addr, 7491)
			d := &Dialer{LocalAddr: net.TCPAddrFromAddrPort(local)}
			cli2, srv2 := pair6(t, l, d, "rdma6", la.String())
			if cli2.LocalAddr().String() != local.String() || !isAddr(srv2.RemoteAddr(), local) {
				t.Fatalf("bound to %v: client from %v, server sees %v", local, cli2.LocalAddr(), srv2.RemoteAddr())
			}
			exchange(t, cli2, srv2, 1000)
		})
	}
}

// TestIntegrationRSIPv6Wildcard: Listen("rdma6", ":0") listens on [::]
// and accepts a client on the global IPv6 address and one on the
// link-local address; each accepted end's local address is the one
// dialled.
func TestIntegrationRSIPv6Wildcard(t *testing.T) {
	addr, dev := rxetest.Addr6(t)
	ll, _ := rxetest.LinkLocal(t)
	checkNoLeaks(t, &dev)
	l, err := Listen("rdma6", ":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	la, ok := l.Addr().(*Addr)
	if !ok || la.AddrPort().Addr() != netip.IPv6Unspecified() || la.AddrPort().Port() == 0 {
		t.Fatalf("rdma6 :0 listens on %v", l.Addr())
	}
	for _, a := range []netip.Addr{addr, ll} {
		dst := netip.AddrPortFrom(a, la.AddrPort().Port())
		cli, srv := pair6(t, l, nil, "rdma6", dst.String())
		if cli.RemoteAddr().String() != dst.String() || !isAddr(srv.LocalAddr(), dst) || !isAddr(srv.RemoteAddr(), cli.LocalAddr().(*Addr).AddrPort()) {
			t.Fatalf("dialled %v: client %v → %v, server %v → %v", dst, cli.LocalAddr(), cli.RemoteAddr(), srv.LocalAddr(), srv.RemoteAddr())
		}
		exchange(t, cli, srv, 1000)
	}
}

// hostsFile puts a hosts file with lines over /etc/hosts (a bind mount,
// undone at cleanup: the guest's root is the host's, read-only) and waits
// until Go's resolver, which caches the file for a few seconds, sees it.
func hostsFile(t *testing.T, name, lines string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(p, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s over /etc/hosts: %v", p, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount("/etc/hosts", 0); err != nil {
			t.Errorf("unmount /etc/hosts: %v", err)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", name); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resolver does not see %s in the new /etc/hosts", name)
		}
	}
}

// TestIntegrationRSIPv6Name: a name whose IPv4 address comes first, then
// its IPv6 one. rdma6 dials the IPv6 one; rdma tries the IPv4 one first
// (nobody listens there) and then the IPv6 one.
func TestIntegrationRSIPv6Name(t *testing.T) {
	addr4, dev := rxetest.Addr(t)
	addr6, _ := rxetest.Addr6(t)
	const name = "rsocket-dual.test"
	hostsFile(t, name, addr4.String()+" "+name+"\n"+addr6.String()+" "+name+"\n")
	checkNoLeaks(t, &dev)
	l, err := Listen("rdma6", netip.AddrPortFrom(addr6, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	la := l.Addr().(*Addr)
	address := net.JoinHostPort(name, strconv.Itoa(int(la.AddrPort().Port())))
	for _, network := range []string{"rdma6", "rdma"} {
		cli, srv := pair6(t, l, nil, network, address)
		if cli.RemoteAddr().String() != la.String() || cli.LocalAddr().(*Addr).AddrPort().Addr() != addr6 {
			t.Fatalf("%s %s: %v → %v, want → %v", network, address, cli.LocalAddr(), cli.RemoteAddr(), la)
		}
		exchange(t, cli, srv, 1000)
	}
	if c, err := Dial("rdma4", address); err == nil {
		c.Close()
		t.Fatalf("rdma4 %s connected to %v: nobody listens on %v", address, c.RemoteAddr(), addr4)
	}
}

// TestIntegrationRSIPv6Rstream: rdma-core's rstream, client and server,
// against ours over IPv6, on the global address and on the link-local
// one (rstream takes "addr%zone" through getaddrinfo).
func TestIntegrationRSIPv6Rstream(t *testing.T) {
	for i, c := range ipv6Addrs {
		t.Run(c.name, func(t *testing.T) {
			addr, _ := c.addr(t)
			t.Run("server", func(t *testing.T) {
				port := 7483 + i
				r := startRstream(t, "-b", addr.String(), "-p", strconv.Itoa(port))
				conn := dialRstream(t, netip.AddrPortFrom(addr, uint16(port)), keepAlive50)
				if conn.RemoteAddr().String() != netip.AddrPortFrom(addr, uint16(port)).String() || conn.LocalAddr().(*Addr).AddrPort().Addr() != addr {
					t.Fatalf("dialled rstream at %v: %v → %v", addr, conn.LocalAddr(), conn.RemoteAddr())
				}
				rstreamPeer(t, conn, true)
				if n, err := conn.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Fatalf("after rstream closed: %d, %v; want io.EOF", n, err)
				}
				if err := r.wait(30 * time.Second); err != nil {
					t.Fatalf("%v\n%s", err, r.out.String())
				}
			})
			t.Run("client", func(t *testing.T) {
				l, err := Listen("rdma6", netip.AddrPortFrom(addr, 0).String())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				dst := l.Addr().(*Addr)
				r := startRstream(t, "-s", dst.AddrPort().Addr().String(), "-p", strconv.Itoa(int(dst.AddrPort().Port())))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				conn, err := l.AcceptConn(ctx)
				if err != nil {
					t.Fatalf("%v\n%s", err, r.out.String())
				}
				t.Cleanup(func() { conn.Close() })
				if !isAddr(conn.LocalAddr(), dst.AddrPort()) || conn.RemoteAddr().(*Addr).AddrPort().Addr() != addr {
					t.Fatalf("accepted rstream: %v → %v, listener %v", conn.LocalAddr(), conn.RemoteAddr(), dst)
				}
				rstreamPeer(t, conn, false)
				if err := r.wait(30 * time.Second); err != nil {
					t.Fatalf("%v\n%s", err, r.out.String())
				}
				if n, err := conn.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Fatalf("after rstream closed: %d, %v; want io.EOF", n, err)
				}
			})
		})
	}
}
