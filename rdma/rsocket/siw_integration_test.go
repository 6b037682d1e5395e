package rsocket

import (
	"bytes"
	"context"
	"io"
	"net/netip"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// siwSetup is the siw guest's rsSetup: listeners on siw0's address in
// the root namespace, dialers in the peer namespace (siw1), since two
// siw devices talk only across namespaces. It returns the guest and
// siw0's index.
func siwSetup(t *testing.T) (rsSetup, *testenv.SIWEnv, uint32) {
	t.Helper()
	e, dev := rxetest.SIW(t)
	s := rsSetup{
		listen: func(t testing.TB) *Listener {
			l, err := Listen("rdma", netip.AddrPortFrom(e.Addr, 0).String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return l
		},
		pairErr: func(l *Listener, d *Dialer) (cli, srv *Conn, err error) {
			e.InPeer(t, func() { cli, srv, err = rsPairErr(l, d) })
			return cli, srv, err
		},
	}
	return s, e, dev
}

// The net.Conn contract on siw, as on rxe: x/net's conformance suite,
// CloseWrite, deadlines, Close waking blocked calls, keepalives.
func TestIntegrationSIWRSNettest(t *testing.T) {
	s, _, _ := siwSetup(t)
	testNettest(t, s)
}

func TestIntegrationSIWRSHalfClose(t *testing.T) {
	s, _, _ := siwSetup(t)
	testHalfClose(t, s)
}

func TestIntegrationSIWRSDeadlines(t *testing.T) {
	s, _, _ := siwSetup(t)
	testDeadlines(t, s)
}

func TestIntegrationSIWRSCloseWakes(t *testing.T) {
	s, _, _ := siwSetup(t)
	testCloseWakes(t, s)
}

func TestIntegrationSIWRSKeepAlive(t *testing.T) {
	s, _, _ := siwSetup(t)
	testKeepAlive(t, s)
}

// TestIntegrationSIWRSData: ours against ours on siw, each way, messages
// from 1 byte to more than the buffers (so that credits go round them),
// through Write and Read, and ReadFrom and WriteTo; the data arrives
// intact, and nothing is left behind: no fd, goroutine or kernel object.
func TestIntegrationSIWRSData(t *testing.T) {
	s, _, dev := siwSetup(t)
	checkNoLeaks(t, &dev)
	l := s.listen(t)
	cli, srv := s.pair(t, l, &keepAlive50)
	if cli.res.mode != msgSend || srv.res.mode != msgSend {
		t.Fatalf("modes %v and %v on siw, want msgSend", cli.res.mode, srv.res.mode)
	}
	off := 0
	for _, n := range []int{1, 4, 64, 4 << 10, 64 << 10, 1 << 20} {
		for _, p := range [][2]*Conn{{cli, srv}, {srv, cli}} {
			want := pattern(off, n)
			off += n
			errc := make(chan error, 1)
			go func() {
				_, err := p[0].Write(want)
				errc <- err
			}()
			got := make([]byte, n)
			p[1].SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.ReadFull(p[1], got); err != nil {
				t.Fatalf("read %d bytes: %v", n, err)
			}
			if err := <-errc; err != nil {
				t.Fatalf("write %d bytes: %v", n, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes differ", n)
			}
		}
	}
	// ReadFrom (data read straight into the send buffer) one way and
	// WriteTo (straight out of the receive buffer) the other.
	want := pattern(7, 3<<20)
	errc := make(chan error, 1)
	go func() {
		n, err := cli.ReadFrom(bytes.NewReader(want))
		if err == nil && n != int64(len(want)) {
			err = io.ErrShortWrite
		}
		if err == nil {
			err = cli.CloseWrite()
		}
		errc <- err
	}()
	var got bytes.Buffer
	srv.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := srv.WriteTo(&got); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("ReadFrom: %v", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("ReadFrom→WriteTo: %d bytes, want %d, or they differ", got.Len(), len(want))
	}
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationSIWRSRstreamServer: our client (root namespace, siw0,
// keepalives every 50 ms) against rdma-core's `rstream -b` on siw1: its
// rsockets run RS_OPT_MSG_SEND too, so both must speak it alike.
func TestIntegrationSIWRSRstreamServer(t *testing.T) {
	_, e, _ := siwSetup(t)
	const port = 7482
	r := startRstreamWith(t, peerCommand(e), "-b", e.PeerAddr.String(), "-p", strconv.Itoa(port))
	c := dialRstream(t, netip.AddrPortFrom(e.PeerAddr, port), keepAlive50)
	rstreamPeer(t, c, true)
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after rstream closed: %d, %v; want io.EOF", n, err)
	}
	if err := r.wait(30 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, r.out.String())
	}
}

// TestIntegrationSIWRSRstreamClient: `rstream -s` on siw1 against our
// listener on siw0.
func TestIntegrationSIWRSRstreamClient(t *testing.T) {
	s, e, _ := siwSetup(t)
	l := s.listen(t)
	dst := l.Addr().(*Addr).AddrPort()
	r := startRstreamWith(t, peerCommand(e), "-s", dst.Addr().String(), "-p", strconv.Itoa(int(dst.Port())))
	c := acceptRstream(t, l, r)
	rstreamPeer(t, c, false)
	if err := r.wait(30 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, r.out.String())
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after rstream closed: %d, %v; want io.EOF", n, err)
	}
}

// TestIntegrationSIWRSPeerKilled: rdma-core's rstream on siw1 killed
// mid-transfer makes our blocked Write and Read on siw0 fail soon (its
// kernel closes the iWARP connection's TCP stream), never hang.
func TestIntegrationSIWRSPeerKilled(t *testing.T) {
	_, e, _ := siwSetup(t)
	const port = 7483
	r := startRstreamWith(t, peerCommand(e), "-b", e.PeerAddr.String(), "-p", strconv.Itoa(port))
	c := dialRstream(t, netip.AddrPortFrom(e.PeerAddr, port), keepAlive50)
	killMidTransfer(t, r, c)
}

// peerCommand makes commands that run in e's peer namespace.
func peerCommand(e *testenv.SIWEnv) func(string, ...string) *exec.Cmd {
	return func(name string, args ...string) *exec.Cmd { return e.PeerCommand(context.Background(), name, args...) }
}
