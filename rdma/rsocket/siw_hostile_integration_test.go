package rsocket

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Hostile peers on Soft-iWARP, as accept_integration_test.go and
// TestWireBadInput have them on rxe. On iWARP a client cannot connect
// without a QP (iw_cm takes the QP the request names), so the hostile
// clients here are rsocket ends of our own, driven past the protocol
// from inside the package.

// stallDial connects to dst as Dial does, up to ESTABLISHED, and stops
// there: a client with its QP and buffers that never sends its first
// message, which an iWARP listener waits for. It returns the client, to
// Close, and when its request went.
func stallDial(ctx context.Context, dst netip.AddrPort) (*Conn, time.Time, error) {
	return stallDialData(ctx, dst, nil)
}

// stallDialData is stallDial with data as the request's private data
// (nil: the client's own connection data).
func stallDialData(ctx context.Context, dst netip.AddrPort, data []byte) (_ *Conn, sent time.Time, err error) {
	ch, err := rdma.CreateEventChannel()
	if err != nil {
		return nil, sent, err
	}
	id, err := ch.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		return nil, sent, errors.Join(err, ch.Close())
	}
	var res rsResources
	var c *Conn
	defer func() {
		switch {
		case err == nil:
		case c != nil:
			err = errors.Join(err, c.Close())
		default:
			err = errors.Join(err, id.Close(), ch.Close(), res.close())
		}
	}()
	if err := id.ResolveAddr(ctx, netip.AddrPort{}, dst, 2*time.Second); err != nil {
		return nil, sent, err
	}
	if _, err := awaitEvent(ctx, id, rdma.EventAddrResolved); err != nil {
		return nil, sent, err
	}
	if err := id.ResolveRoute(ctx, 2*time.Second); err != nil {
		return nil, sent, err
	}
	if _, err := awaitEvent(ctx, id, rdma.EventRouteResolved); err != nil {
		return nil, sent, err
	}
	// The least buffers: siw on 6.1 pins a process's MRs within
	// RLIMIT_MEMLOCK (8 MiB in the guest), root or not, and the tests
	// hold many of these, and the listener's ends, in one process.
	d := Dialer{ReadBuffer: minBuf, WriteBuffer: minBuf}
	if err := res.setup(id, d.sizes()); err != nil {
		return nil, sent, err
	}
	c = newConn(id, ch, res)
	if data == nil {
		cd := c.ourConnData()
		data = cd.Marshal()
	}
	sent = time.Now()
	if err := id.Connect(ctx, &rdma.ConnParam{PrivateData: data, FlowControl: 1, RetryCount: 7,
		RNRRetryCount: 7, InitiatorDepth: 1}); err != nil {
		return nil, sent, err
	}
	if _, err := awaitEvent(ctx, id, rdma.EventEstablished); err != nil {
		return nil, sent, err
	}
	return c, sent, nil
}

// stallEnv turns the test binary into a client that stalls (TestMain
// runs stallMain): it connects to the address the variable holds, says
// "stalled" on stdout, and waits to be killed.
const stallEnv = "RDMASTACK_RSOCKET_STALL"

func stallMain(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	c, _, err := stallDial(context.Background(), ap)
	if err != nil {
		return err
	}
	fmt.Println("stalled")
	time.Sleep(2 * time.Minute)
	return fmt.Errorf("stalled client %v: not killed", c.LocalAddr())
}

// siwHostileSetup is a listener on siw0 made by lc, and the leak checks
// of both siw devices: the listener's and the peer's (siw1), where the
// hostile clients run.
func siwHostileSetup(t *testing.T, lc ListenConfig) (*testenv.SIWEnv, *Listener, [2]uint32) {
	t.Helper()
	_, e, dev := siwSetup(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	pd, err := nl.DeviceByName(e.PeerDev)
	if err != nil {
		t.Fatal(err)
	}
	devs := [2]uint32{dev, pd.Index}
	checkNoLeaks(t, &devs[0])
	checkNoLeaks(t, &devs[1])
	l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(e.Addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return e, l, devs
}

// siwHonest connects an honest client in the peer namespace to l.
func siwHonest(t *testing.T, e *testenv.SIWEnv, l *Listener, d *Dialer) (cli, srv *Conn) {
	t.Helper()
	var err error
	e.InPeer(t, func() { cli, srv, err = rsPairErr(l, d) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close(); srv.Close() })
	return cli, srv
}

// echoOnce sends msg from cli to srv and back, within 10s.
func echoOnce(t *testing.T, cli, srv *Conn, msg string) {
	t.Helper()
	for _, p := range [][2]*Conn{{cli, srv}, {srv, cli}} {
		if _, err := p[0].Write([]byte(msg)); err != nil {
			t.Fatalf("write %q: %v", msg, err)
		}
		b := make([]byte, len(msg))
		p[1].SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(p[1], b); err != nil || string(b) != msg {
			t.Fatalf("read %q: %q, %v", msg, b, err)
		}
	}
}

// TestIntegrationSIWRSAcceptStalled: on iWARP the connection is
// established before the client says anything, and the listener is mute
// until the client's first message. 16 clients that connect and never
// speak each hold a handshake (not an accepted Conn) while a good client
// is accepted and moves data; with MaxHandshakes taken, a Dial is
// refused; at the handshake timeout each stalled client is disconnected,
// and afterwards only the good connection's objects are left.
func TestIntegrationSIWRSAcceptStalled(t *testing.T) {
	const n = 16
	// The 17 clients connect one after another (the peer namespace is
	// one locked thread's), some 0.2s each under TCG.
	timeout := 15 * time.Second
	if testenv.Race {
		timeout = 30 * time.Second
	}
	lc := ListenConfig{HandshakeTimeout: timeout, MaxHandshakes: n + 1, KeepAlive: -1,
		ReadBuffer: minBuf, WriteBuffer: minBuf} // see stallDialData
	e, l, devs := siwHostileSetup(t, lc)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	objs0 := [2]map[nldev.ResourceType]uint64{rsObjects(t, nl, devs[0]), rsObjects(t, nl, devs[1])}
	g0 := runtime.NumGoroutine()
	dst := l.Addr().(*Addr).AddrPort()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var stalled []*Conn
	var sent []time.Time
	t.Cleanup(func() {
		for _, c := range stalled {
			c.Close()
		}
	})
	stall := func(k int) {
		t.Helper()
		begun := time.Now()
		e.InPeer(t, func() {
			for range k {
				c, at, err := stallDial(ctx, dst)
				if err != nil {
					t.Errorf("stalled client %d: %v", len(stalled), err)
					return
				}
				stalled, sent = append(stalled, c), append(sent, at)
			}
		})
		if t.Failed() {
			t.FailNow()
		}
		t.Logf("%d clients connected and stalled in %v", k, time.Since(begun))
	}
	stall(n)
	if p := l.hs.inFlight(); p != n {
		t.Fatalf("%d handshakes pending with %d clients stalled, want %d", p, n, n)
	}

	// The good client takes the last slot.
	begun := time.Now()
	cli, srv := siwHonest(t, e, l, &Dialer{KeepAlive: -1})
	t.Logf("the good client was accepted in %v with %d handshakes pending", time.Since(begun), l.hs.inFlight())
	if time.Since(sent[0]) >= timeout {
		t.Fatalf("the good client took until after the first stalled client's timeout")
	}
	echoOnce(t, cli, srv, "ping")

	// One more stalled client fills MaxHandshakes: a Dial is refused.
	stall(1)
	var derr error
	e.InPeer(t, func() {
		var c *Conn
		c, derr = (&Dialer{KeepAlive: -1}).DialContext(ctx, "rdma", dst.String())
		if c != nil {
			c.Close()
		}
	})
	if !errors.Is(derr, unix.ECONNREFUSED) {
		t.Fatalf("a Dial with %d handshakes pending: %v, want ECONNREFUSED", l.hs.inFlight(), derr)
	}
	if time.Since(sent[0]) >= timeout {
		t.Fatalf("the refused Dial came after the first stalled client's timeout: the test is too slow to tell")
	}

	// At the handshake timeout the listener disconnects each stalled
	// client; none was ever accepted.
	for i, c := range stalled {
		ev, err := nextEvent(ctx, c.id)
		if err != nil {
			t.Fatalf("stalled client %d waiting for its disconnect: %v", i, err)
		}
		if ev.Type != rdma.EventDisconnected {
			t.Fatalf("stalled client %d got %v (%v), want DISCONNECTED", i, ev.Type, ev.Status)
		}
		if waited := time.Since(sent[i]); waited < timeout {
			t.Fatalf("stalled client %d disconnected %v after its request, before the handshake timeout", i, waited)
		}
	}
	t.Logf("the stalled clients were disconnected %v after the good client", time.Since(begun))
	for _, c := range stalled {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	stalled = nil
	actx, acancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer acancel()
	if c, err := l.AcceptConn(actx); err == nil {
		c.Close()
		t.Fatalf("a stalled client was accepted")
	}
	echoOnce(t, cli, srv, "still here")

	// Only the good connection's objects are left: its server on siw0,
	// its client on siw1; its 4 progress goroutines.
	var objs [2]map[nldev.ResourceType]uint64
	var g, pending int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		objs = [2]map[nldev.ResourceType]uint64{rsObjects(t, nl, devs[0]), rsObjects(t, nl, devs[1])}
		g, pending = runtime.NumGoroutine(), l.hs.inFlight()
		ok := g <= g0+4 && pending == 0
		for i := range objs {
			for typ, k := range objs0[i] {
				ok = ok && objs[i][typ] == k+rsConnObjects[typ]
			}
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the handshake timeout: kernel objects %v, before %v; goroutines %d, before %d; %d handshakes pending",
				objs, objs0, g, g0, pending)
		}
	}
}

// TestIntegrationSIWRSAcceptGarbage: requests whose rsocket connection
// data does not parse (too short, another version) are rejected at once,
// each Dial failing with ECONNREFUSED as on rxe (siw's MPA reject comes
// as ECONNRESET), and leave nothing; a good client then gets through.
func TestIntegrationSIWRSAcceptGarbage(t *testing.T) {
	const timeout = time.Minute
	e, l, _ := siwHostileSetup(t, ListenConfig{HandshakeTimeout: timeout, KeepAlive: -1})
	dst := l.Addr().(*Addr).AddrPort()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e.InPeer(t, func() {
		for i := range 8 {
			data := []byte("garbage!")
			if i%2 == 1 {
				data = append(rsValidConnData(), make([]byte, 16)...)
				data[0] = 0x55 // rsocket version 0x55
			}
			c, sent, err := stallDialData(ctx, dst, data)
			if c != nil {
				c.Close()
			}
			if !errors.Is(err, unix.ECONNREFUSED) {
				t.Errorf("connection data %q: %v, want ECONNREFUSED", data, err)
				return
			}
			if time.Since(sent) >= timeout/4 {
				t.Errorf("connection data %q rejected after %v", data, time.Since(sent))
			}
		}
	})
	if p := l.hs.inFlight(); p != 0 {
		t.Fatalf("%d handshakes pending after the garbage", p)
	}
	cli, srv := siwHonest(t, e, l, &Dialer{KeepAlive: -1})
	echoOnce(t, cli, srv, "after the garbage")
}

// TestIntegrationSIWRSStalledKilled: a client process that connects and
// stalls, killed mid-handshake, ends its handshake when its kernel closes
// the connection, long before the handshake timeout; it is never
// accepted, and leaves nothing on either device.
func TestIntegrationSIWRSStalledKilled(t *testing.T) {
	e, l, _ := siwHostileSetup(t, ListenConfig{HandshakeTimeout: time.Minute, KeepAlive: -1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.PeerCommand(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stallEnv+"="+l.Addr().String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "stalled\n" {
		t.Fatalf("the stalling client said %q, %v\n%s", line, err, stderr.String())
	}
	if p := l.hs.inFlight(); p != 1 {
		t.Fatalf("%d handshakes pending with a client stalled, want 1", p)
	}
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for deadline := killed.Add(15 * time.Second); l.hs.inFlight() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the handshake of a client killed %v ago is still pending", time.Since(killed))
		}
	}
	t.Logf("the killed client's handshake ended %v after the kill", time.Since(killed))
	actx, acancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer acancel()
	if c, err := l.AcceptConn(actx); err == nil {
		c.Close()
		t.Fatalf("the killed client was accepted")
	}
	// The listener still serves.
	cli, srv := siwHonest(t, e, l, &Dialer{KeepAlive: -1})
	echoOnce(t, cli, srv, "after the kill")
}

// liarPost posts wr on c's QP as it is, past the engine (c.mu held).
func liarPost(c *conn, wr uverbs.SendWR) error {
	if wr.ID == 0 {
		wr.ID = uint64(rsproto.MakeMsg(rsproto.OpData, 0)) // completes as a data message of 0 bytes
	}
	return c.postSend(&wr)
}

// liarSend SENDs n bytes of c's send buffer whose first word is w.
func liarSend(c *conn, w uint32, n int) error {
	off := c.res.wordSlot()
	if n > msgSize {
		off = 0
	}
	binary.LittleEndian.PutUint32(c.res.sbuf.Bytes()[off:], w)
	var flags uverbs.SendFlags
	if n <= msgSize {
		flags = uverbs.SendInline
	}
	return liarPost(c, uverbs.SendWR{Opcode: uverbs.OpSend, Flags: flags,
		SGE: []uverbs.SGE{{Addr: c.res.sbuf.Addr(off), Length: uint32(n), LKey: c.res.smr.LKey()}}})
}

// liarWrite RDMA WRITEs 64 bytes to off bytes past where c's next data
// would go, under the peer's key xor keyXor.
func liarWrite(c *conn, off uint64, keyXor uint32) error {
	tg := c.target(c.flow.targetSGE)
	return liarPost(c, uverbs.SendWR{Opcode: uverbs.OpRDMAWrite, RemoteAddr: tg.Addr + off, RKey: tg.Key ^ keyXor,
		SGE: []uverbs.SGE{{Addr: c.res.sbuf.Addr(0), Length: 64, LKey: c.res.smr.LKey()}}})
}

// TestIntegrationSIWRSLiar: a peer that lies on the wire in rsockets'
// iWARP mode (each lie a connection of its own, from our own client
// driven past its engine) costs only its connection: the listener's end
// of it fails with a clear error (a protocol violation, a failed
// completion, or the peer's reset) within seconds, never a hang or a
// panic, while an honest connection on the same Listener keeps moving
// data; nothing is left on either device.
func TestIntegrationSIWRSLiar(t *testing.T) {
	// 16 receives on the listener's side (the least), so that a flood
	// outruns them.
	e, l, _ := siwHostileSetup(t, ListenConfig{KeepAlive: -1, RecvQueue: minQueue})
	cli, srv := siwHonest(t, e, l, &Dialer{KeepAlive: -1})
	word := func(m rsproto.Msg) func(*conn) error {
		return func(c *conn) error { return liarSend(c, uint32(m), msgSize) }
	}
	for _, lie := range []struct {
		name string
		do   func(*conn) error
	}{
		{"UnknownOp", word(rsproto.MakeMsg(rsproto.Op(5), 0))},
		{"UnknownCtrl", word(rsproto.MakeMsg(rsproto.OpCtrl, 99))},
		{"CreditsBeyondWindow", word(rsproto.MakeMsg(rsproto.OpSGL, 0x8000))},
		{"DataBeyondBuffer", word(rsproto.MakeMsg(rsproto.OpData, 1<<20))},
		{"ShortSend", func(c *conn) error { return liarSend(c, 0, 2) }},
		{"LongSend", func(c *conn) error { return liarSend(c, 0, 64) }},
		{"WriteOutsideRegion", func(c *conn) error { return liarWrite(c, 1<<30, 0) }},
		{"WriteBadKey", func(c *conn) error { return liarWrite(c, 0, 0xff) }},
		{"FloodBeyondCredits", func(c *conn) error {
			for i := range 256 {
				if err := liarSend(c, uint32(rsproto.MakeMsg(rsproto.OpCtrl, uint32(rsproto.CtrlKeepAlive))), msgSize); err != nil {
					return fmt.Errorf("send %d: %w", i, err)
				}
			}
			return nil
		}},
	} {
		t.Run(lie.name, func(t *testing.T) {
			liar, victim := siwHonest(t, e, l, &Dialer{KeepAlive: -1, SendQueue: 512})
			liar.mu.Lock()
			err := lie.do(liar.conn)
			liar.mu.Unlock()
			if err != nil {
				t.Fatalf("the lie: %v", err)
			}
			begun := time.Now()
			victim.SetDeadline(time.Now().Add(20 * time.Second))
			_, rerr := victim.Read(make([]byte, 64))
			var ce *CompletionError
			switch {
			case errors.Is(rerr, rsproto.ErrMalformed), errors.As(rerr, &ce), errors.Is(rerr, unix.ECONNRESET):
			default:
				t.Fatalf("the listener's end after the lie: %v, want a protocol violation, a failed completion or a reset", rerr)
			}
			t.Logf("the listener's end failed in %v: %v", time.Since(begun), rerr)
			if _, err := victim.Write([]byte("x")); err == nil {
				t.Fatalf("a Write on the failed end succeeded")
			}
			echoOnce(t, cli, srv, lie.name)
			if err := victim.Close(); err != nil {
				t.Logf("close of the failed end: %v", err)
			}
			liar.Close()
		})
	}
}
