package rsocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// rstream's run in custom mode (-S, -C, -I 1) with verification (-T v):
// a 16-byte sync from the client and back, then count transfers of size
// bytes from the client and as many back. Each direction's bytes are
// rstream's format_buf pattern: byte i of the stream is i mod 256.
//
// 1 MiB each way: more than twice rstream's receive buffer halves (it asks
// for a 512 KiB buffer) and ours (128 KiB), so that both sides' credit
// updates go round their buffers.
const (
	rstreamSize  = 16 << 10
	rstreamCount = 64
)

type rstream struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan error
}

func startRstream(t *testing.T, args ...string) *rstream {
	t.Helper()
	return startRstreamWith(t, exec.Command, args...)
}

// startRstreamWith is startRstream with the command made by command
// (exec.Command, or a SIWEnv's in its peer namespace).
func startRstreamWith(t *testing.T, command func(string, ...string) *exec.Cmd, args ...string) *rstream {
	t.Helper()
	path := testenv.Oracle(t, "rstream")
	args = append(args, "-S", strconv.Itoa(rstreamSize), "-C", strconv.Itoa(rstreamCount), "-I", "1", "-T", "v")
	r := &rstream{cmd: command(path, args...), done: make(chan error, 1)}
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() { r.cmd.Process.Kill(); r.wait(10 * time.Second) })
	return r
}

// wait waits for rstream to exit and returns its error; a timeout is an
// error too.
func (r *rstream) wait(d time.Duration) error {
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(d):
		return fmt.Errorf("rstream %s did not exit in %v", strings.Join(r.cmd.Args[1:], " "), d)
	}
}

// pattern is n bytes of rstream's stream from offset off.
func pattern(off, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(off + i)
	}
	return b
}

// rstreamPeer is rstream's other side on c: client (sends first) or
// server.
func rstreamPeer(t *testing.T, c *Conn, client bool) {
	t.Helper()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	send := func(off, n int) {
		if _, err := c.Write(pattern(off, n)); err != nil {
			t.Fatalf("write %d bytes at %d: %v", n, off, err)
		}
	}
	recv := func(off, n int) {
		b := make([]byte, n)
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatalf("read %d bytes at %d: %v", n, off, err)
		}
		if !bytes.Equal(b, pattern(off, n)) {
			t.Fatalf("data at %d differs from rstream's pattern", off)
		}
	}
	total := rstreamSize * rstreamCount
	if client {
		send(0, 16)
		recv(0, 16)
		send(16, total)
		recv(16, total)
	} else {
		recv(0, 16)
		send(0, 16)
		recv(16, total)
		send(16, total)
	}
}

// keepAlive50 dials with keepalives every 50ms: the rsocket peer must
// take them too.
var keepAlive50 = Dialer{KeepAlive: 50 * time.Millisecond}

// dialRstream dials rstream's server with d until it listens.
func dialRstream(t *testing.T, dst netip.AddrPort, d Dialer) *Conn {
	t.Helper()
	d.Timeout = 10 * time.Second
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := d.DialContext(context.Background(), "rdma", dst.String())
		if err == nil {
			t.Cleanup(func() { c.Close() })
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial rstream at %v: %v", dst, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestIntegrationRSRstreamServer: our client against `rstream -b ADDR`.
func TestIntegrationRSRstreamServer(t *testing.T) {
	addr, _ := rxetest.Addr(t)
	const port = 7481
	r := startRstream(t, "-b", addr.String(), "-p", strconv.Itoa(port))
	c := dialRstream(t, netip.AddrPortFrom(addr, port), keepAlive50)
	rstreamPeer(t, c, true)
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after rstream closed: %d, %v; want io.EOF", n, err)
	}
	if err := r.wait(30 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, r.out.String())
	}
}

// acceptRstream accepts rstream r's connection on l.
func acceptRstream(t *testing.T, l *Listener, r *rstream) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := l.AcceptConn(ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out.String())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIntegrationRSRstreamClient: `rstream -s ADDR` against our listener.
func TestIntegrationRSRstreamClient(t *testing.T) {
	l, _ := rsListen(t)
	dst := l.Addr().(*Addr).AddrPort()
	r := startRstream(t, "-s", dst.Addr().String(), "-p", strconv.Itoa(int(dst.Port())))
	c := acceptRstream(t, l, r)
	rstreamPeer(t, c, false)
	if err := r.wait(30 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, r.out.String())
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after rstream closed: %d, %v; want io.EOF", n, err)
	}
}

// TestIntegrationRSPeerKilled: rstream killed mid-transfer (its server
// waits for our data; we write without end) makes our blocked Write and
// Read fail soon, never hang.
func TestIntegrationRSPeerKilled(t *testing.T) {
	addr, _ := rxetest.Addr(t)
	const port = 7482
	r := startRstream(t, "-b", addr.String(), "-p", strconv.Itoa(port))
	c := dialRstream(t, netip.AddrPortFrom(addr, port), keepAlive50)
	killMidTransfer(t, r, c)
}

// killMidTransfer kills r, connected to c, while c writes to it, and
// fails t unless c's Write and Read fail soon with a reset or a failed
// completion.
func killMidTransfer(t *testing.T, r *rstream, c *Conn) {
	t.Helper()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.Write(pattern(0, 16)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	werr := make(chan error, 1)
	go func() {
		for off := 16; ; off += 64 << 10 {
			if _, err := c.Write(pattern(off, 64<<10)); err != nil {
				werr <- err
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	r.cmd.Process.Kill()
	start := time.Now()
	for _, what := range []string{"write", "read"} {
		var err error
		if what == "write" {
			select {
			case err = <-werr:
			case <-time.After(30 * time.Second):
				t.Fatal("Write to a killed peer hangs")
			}
		} else {
			_, err = io.ReadAll(c)
		}
		// The peer's kernel sends a DREQ (ECONNRESET), or our QP's sends
		// fail (EIO): either, but not a timeout.
		if !errors.Is(err, unix.ECONNRESET) && !errors.Is(err, unix.EIO) || isTimeoutErr(err) {
			t.Fatalf("%s after the peer was killed: %v", what, err)
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("noticing the killed peer took %v", d)
	}
}

func isTimeoutErr(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
