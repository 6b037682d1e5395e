package rsocket

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// peerView is what c learned of its peer at connect: the first target
// it writes into (half the peer's receive buffer) and its message credit
// (the peer's receive queue). Call it before c sends.
func peerView(c *Conn) (target int, credits uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.target(0).Length), c.flow.sseqComp
}

// qpCap is c's QP's capabilities as the kernel reports them.
func qpCap(t *testing.T, c *Conn) uverbs.QPCap {
	t.Helper()
	var cp uverbs.QPCap
	err := c.Control(func(_ *rdma.ID, qp *uverbs.QP) error {
		attr, err := qp.Query(uverbs.QPAttrCap)
		if err == nil {
			cp = attr.Cap
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// TestIntegrationRSSizes: the Dialer's and ListenConfig's sizes make the
// QPs and buffers, each peer learns the other's receive side from the
// connection data, and data flows through the small buffers both ways.
func TestIntegrationRSSizes(t *testing.T) {
	addr, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	lc := ListenConfig{ReadBuffer: 4 << 10, WriteBuffer: 8 << 10, SendQueue: 40, RecvQueue: 20, Inline: -1}
	l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	d := &Dialer{ReadBuffer: 32 << 10, WriteBuffer: 1, SendQueue: 64, RecvQueue: 1, Inline: 100}
	cli, srv := rsPair(t, l, d)

	// rsetsockopt doubles SO_RCVBUF and SO_SNDBUF; the send buffer's
	// floor is 4 KiB, a queue's 16.
	for _, c := range []struct {
		name             string
		c                *Conn
		rbuf, sbuf       int
		sq, rq           int
		inlineAtLeast    int
		peerRbuf, peerRq int
	}{
		{"client", cli, 64 << 10, 4 << 10, 64, 16, 100, 8 << 10, 20},
		{"server", srv, 8 << 10, 16 << 10, 40, 20, 0, 64 << 10, 16},
	} {
		c.c.mu.Lock()
		r := c.c.res
		c.c.mu.Unlock()
		if r.rbufSize != c.rbuf || r.sbufSize != c.sbuf || r.sqSize != c.sq || r.rqSize != c.rq {
			t.Errorf("%s: rbuf %d sbuf %d sq %d rq %d; want %d %d %d %d", c.name, r.rbufSize, r.sbufSize, r.sqSize, r.rqSize,
				c.rbuf, c.sbuf, c.sq, c.rq)
		}
		if target, credits := peerView(c.c); target != c.peerRbuf/2 || int(credits) != c.peerRq {
			t.Errorf("%s: the peer's target %d, credits %d; want %d, %d", c.name, target, credits, c.peerRbuf/2, c.peerRq)
		}
		cp := qpCap(t, c.c)
		if int(cp.MaxSendWR) < c.sq || int(cp.MaxRecvWR) < c.rq || int(cp.MaxInlineData) < c.inlineAtLeast ||
			r.inline != c.c.res.qp.MaxInline() {
			t.Errorf("%s: QP caps %+v (inline %d); want sq %d rq %d inline ≥ %d", c.name, cp, r.inline, c.sq, c.rq, c.inlineAtLeast)
		}
	}
	// Writes of sizes around the inline size and the buffers, both ways.
	var want bytes.Buffer
	for _, n := range []int{1, 99, 100, 101, 4 << 10, 100 << 10} {
		want.Write(pattern(want.Len(), n))
	}
	for _, p := range [][2]*Conn{{cli, srv}, {srv, cli}} {
		errc := make(chan error, 1)
		go func() {
			b := want.Bytes()
			for _, n := range []int{1, 99, 100, 101, 4 << 10, 100 << 10} {
				if _, err := p[0].Write(b[:n]); err != nil {
					errc <- err
					return
				}
				b = b[n:]
			}
			errc <- nil
		}()
		got := make([]byte, want.Len())
		if _, err := io.ReadFull(p[1], got); err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("read %v (equal %v)", err, bytes.Equal(got, want.Bytes()))
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	// After connect, the buffers stay as they are: the same size is
	// confirmed, another refused.
	if err := cli.SetReadBuffer(32 << 10); err != nil {
		t.Errorf("SetReadBuffer of the size it has: %v", err)
	}
	if err := cli.SetWriteBuffer(1 << 20); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("SetWriteBuffer after connect: %v", err)
	}
}

// TestIntegrationRSRstreamBuffers: rdma-core's rstream with -B in both
// roles: each side learns the other's buffer (rstream's receive buffer
// is twice -B: rsetsockopt doubles it), and rstream's verified transfer
// goes through our small buffers.
func TestIntegrationRSRstreamBuffers(t *testing.T) {
	addr, _ := rxetest.Addr(t)
	const cBuf = 8 << 10 // rstream -B: its receive buffer is 16 KiB
	t.Run("server", func(t *testing.T) {
		// rstream applies -B to its listening rsocket only after
		// rlisten, and librdmacm's listen thread accepts a REQ as soon
		// as it comes: a dial that lands between the two gets
		// rsockets' default buffer (a 64 KiB target). That race is
		// the C tool's; a fresh rstream is started for another try.
		const port, rsDefault = 7491, 64 << 10
		var c *Conn
		var r *rstream
		for try := 0; ; try++ {
			r = startRstream(t, "-b", addr.String(), "-p", strconv.Itoa(port+try), "-B", strconv.Itoa(cBuf))
			c = dialRstream(t, netip.AddrPortFrom(addr, uint16(port+try)), Dialer{ReadBuffer: 4 << 10, Inline: 32})
			target, credits := peerView(c)
			if target == cBuf && credits == 384 {
				break
			}
			if target != rsDefault || try == 2 {
				t.Fatalf("rstream -B %d: target %d, credits %d; want %d, 384", cBuf, target, credits, cBuf)
			}
			t.Logf("try %d: rstream accepted before it applied -B (target %d); again", try, target)
			c.Close()
			r.cmd.Process.Kill()
		}
		rstreamPeer(t, c, true)
		if err := r.wait(30 * time.Second); err != nil {
			t.Fatalf("%v\n%s", err, r.out.String())
		}
	})
	t.Run("client", func(t *testing.T) {
		lc := ListenConfig{ReadBuffer: 4 << 10, WriteBuffer: 4 << 10, Inline: 200}
		l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(addr, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		dst := l.Addr().(*Addr).AddrPort()
		r := startRstream(t, "-s", dst.Addr().String(), "-p", strconv.Itoa(int(dst.Port())), "-B", strconv.Itoa(cBuf))
		c := acceptRstream(t, l, r)
		if target, credits := peerView(c); target != cBuf || credits != 384 {
			t.Fatalf("rstream -B %d: target %d, credits %d; want %d, 384", cBuf, target, credits, cBuf)
		}
		if cp := qpCap(t, c); cp.MaxInlineData < 200 {
			t.Fatalf("inline %d, asked 200", cp.MaxInlineData)
		}
		rstreamPeer(t, c, false)
		if err := r.wait(30 * time.Second); err != nil {
			t.Fatalf("%v\n%s", err, r.out.String())
		}
	})
}

// tempFile is a file holding data, open for reading.
func tempFile(t testing.TB, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// fillWriter takes want bytes, then fails with errFull.
type fillWriter struct {
	b    bytes.Buffer
	want int
}

var errFull = errors.New("full")

func (w *fillWriter) Write(p []byte) (int, error) {
	w.b.Write(p)
	if w.b.Len() >= w.want {
		return len(p), errFull
	}
	return len(p), nil
}

// TestIntegrationRSReadFromWriteTo: io.Copy into a Conn from a file, a
// reader and net.Buffers, and out of one, carries the data; WriteBuffers
// gathers small buffers into few data messages; Close while ReadFrom's
// source blocks returns at once and frees everything once it returns.
func TestIntegrationRSReadFromWriteTo(t *testing.T) {
	_, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	l, _ := rsListen(t)
	cli, srv := rsPair(t, l, nil)
	data := pattern(0, 3<<20+77)
	f := tempFile(t, data)
	for _, src := range []struct {
		name string
		r    func() io.Reader
	}{
		{"file", func() io.Reader { f.Seek(0, io.SeekStart); return f }},
		{"reader", func() io.Reader { return struct{ io.Reader }{bytes.NewReader(data)} }},
	} {
		got := make(chan []byte, 1)
		go func() {
			w := &fillWriter{want: len(data)}
			// io.Copy takes srv's WriterTo.
			if _, err := io.Copy(w, srv); !errors.Is(err, errFull) {
				t.Error(err)
			}
			got <- w.b.Bytes()
		}()
		n, err := io.Copy(cli, src.r())
		if err != nil || n != int64(len(data)) {
			t.Fatalf("%s: io.Copy: %d, %v", src.name, n, err)
		}
		if b := <-got; !bytes.Equal(b, data) {
			t.Fatalf("%s: %d bytes differ", src.name, len(b))
		}
	}
	// WriteTo proper, to the end of the stream: the peer half-closes.
	go func() {
		cli.Write(data[:100<<10])
		cli.CloseWrite()
	}()
	var b bytes.Buffer
	if n, err := srv.WriteTo(&b); err != nil || n != 100<<10 || !bytes.Equal(b.Bytes(), data[:100<<10]) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}

	// 100 buffers of 100 bytes go as one message or a few.
	var bufs net.Buffers
	for i := range 100 {
		bufs = append(bufs, data[i*100:(i+1)*100])
	}
	if n, err := srv.WriteBuffers(&bufs); err != nil || n != 10000 || len(bufs) != 0 {
		t.Fatalf("WriteBuffers: %d, %v, %d left", n, err, len(bufs))
	}
	got := make([]byte, 10000)
	if _, err := io.ReadFull(cli, got); err != nil || !bytes.Equal(got, data[:10000]) {
		t.Fatalf("read the buffers: %v", err)
	}
	cli2, srv2 := rsPair(t, l, nil)
	before := func() uint16 { srv2.mu.Lock(); defer srv2.mu.Unlock(); return srv2.flow.rseqNo }()
	bufs = bufs[:0]
	for i := range 100 {
		bufs = append(bufs, data[i*100:(i+1)*100])
	}
	if _, err := cli2.WriteBuffers(&bufs); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(srv2, got); err != nil || !bytes.Equal(got, data[:10000]) {
		t.Fatalf("read the buffers: %v", err)
	}
	if msgs := func() uint16 { srv2.mu.Lock(); defer srv2.mu.Unlock(); return srv2.flow.rseqNo }() - before; msgs > 3 {
		t.Fatalf("100 buffers took %d data messages", msgs)
	}

	// Close while the source blocks.
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := cli2.ReadFrom(pr)
		done <- err
	}()
	pw.Write([]byte("x"))
	start := time.Now()
	if err := cli2.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close took %v with ReadFrom's source blocked", d)
	}
	pw.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("ReadFrom after Close: %v", err)
	}
}

// TestIntegrationRSControl: a Dialer's Control sets TOS and the ACK
// timeout, which the QP carries; Conn.Control reaches the id and the QP;
// a failing Control aborts the dial and Listen with nothing left behind.
func TestIntegrationRSControl(t *testing.T) {
	addr, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	var listenID *rdma.ID
	lc := ListenConfig{Control: func(id *rdma.ID) error {
		listenID = id
		return id.SetOption(rdma.OptionReuseAddr, 1)
	}}
	l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if listenID != l.id {
		t.Fatal("ListenConfig.Control did not get the listening id")
	}
	d := &Dialer{Control: func(id *rdma.ID) error {
		if err := id.SetOption(rdma.OptionTOS, 32); err != nil {
			return err
		}
		return id.SetOption(rdma.OptionAckTimeout, 18)
	}}
	cli, _ := rsPair(t, l, d)
	var attr *uverbs.QPAttr
	var src netip.AddrPort
	if err := cli.Control(func(id *rdma.ID, qp *uverbs.QP) error {
		a, err := id.QueryAddr()
		src = a.Src
		if err == nil {
			attr, err = qp.Query(uverbs.QPAttrAV | uverbs.QPAttrTimeout)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if attr.AH.TrafficClass != 32 || attr.Timeout != 18 || src != cli.LocalAddr().(*Addr).AddrPort() {
		t.Fatalf("traffic class %d, ACK timeout %d, source %v; want 32, 18, %v", attr.AH.TrafficClass, attr.Timeout, src, cli.LocalAddr())
	}

	no := errors.New("no")
	calls := 0
	_, err = (&Dialer{Control: func(*rdma.ID) error { calls++; return no }}).DialContext(context.Background(), "rdma", l.Addr().String())
	if !errors.Is(err, no) || calls != 1 {
		t.Fatalf("dial with a failing Control: %v (%d calls)", err, calls)
	}
	if _, err := (&ListenConfig{Control: func(*rdma.ID) error { return no }}).Listen(context.Background(), "rdma",
		netip.AddrPortFrom(addr, 0).String()); !errors.Is(err, no) {
		t.Fatalf("listen with a failing Control: %v", err)
	}
	cli.Close()
	if err := cli.Control(func(*rdma.ID, *uverbs.QP) error { return nil }); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Control after Close: %v", err)
	}
}

// sentPackets is the rxe device's count of packets sent.
func sentPackets(t *testing.T, c *Conn) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/infiniband", c.id.Device().Name(), "ports/1/hw_counters/sent_pkts"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIntegrationRSKeepAliveSetters: SetKeepAlive and SetKeepAlivePeriod
// start, speed up and stop the probes, as the device's packet count
// shows (a probe is a 0-byte RDMA WRITE and its ACK, on the one device
// both ends use).
func TestIntegrationRSKeepAliveSetters(t *testing.T) {
	l, _ := rsListen(t)
	cli, _ := rsPair(t, l, &Dialer{KeepAlive: -1})
	sent := func() int {
		n := sentPackets(t, cli)
		time.Sleep(400 * time.Millisecond)
		return sentPackets(t, cli) - n
	}
	if n := sent(); n > 4 {
		t.Fatalf("%d packets with keepalives off", n)
	}
	if err := cli.SetKeepAlivePeriod(10 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := sent(); n > 4 {
		t.Fatalf("%d packets with keepalives off and a period set", n)
	}
	if err := cli.SetKeepAlive(true); err != nil {
		t.Fatal(err)
	}
	if n := sent(); n < 20 {
		t.Fatalf("%d packets in 400ms with keepalives every 10ms", n)
	}
	if err := cli.SetKeepAliveConfig(net.KeepAliveConfig{Enable: false}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the last probe's completion
	if n := sent(); n > 4 {
		t.Fatalf("%d packets after keepalives were turned off", n)
	}
	if err := cli.SetKeepAlivePeriod(0); !errors.Is(err, errInvalid) {
		t.Fatalf("period 0: %v", err)
	}
	cli.Close()
	if err := cli.SetKeepAlive(true); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("SetKeepAlive after Close: %v", err)
	}
}

// TestIntegrationRSListenerDeadline: Accept fails with
// os.ErrDeadlineExceeded at the deadline, a deadline set while Accept
// blocks wakes it, and the zero time lets Accept wait again.
func TestIntegrationRSListenerDeadline(t *testing.T) {
	l, _ := rsListen(t)
	start := time.Now()
	l.SetDeadline(start.Add(100 * time.Millisecond))
	_, err := l.Accept()
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("Accept at the deadline: %v after %v", err, time.Since(start))
	}
	if _, err := l.Accept(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Accept past the deadline: %v", err)
	}
	l.SetDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	l.SetDeadline(time.Now())
	select {
	case err := <-errc:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Accept woken by a deadline: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a deadline set while Accept blocks did not wake it")
	}
	l.SetDeadline(time.Time{})
	go func() {
		c, err := Dial("rdma", l.Addr().String())
		if err == nil {
			c.Close()
		}
	}()
	l.SetDeadline(time.Now().Add(20 * time.Second))
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept with no deadline: %v", err)
	}
	c.Close()
	l.Close()
	if err := l.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("SetDeadline after Close: %v", err)
	}
}
