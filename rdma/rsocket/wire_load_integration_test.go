package rsocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// stormDials is how many dials TestWireRsocketDialStorm makes at once,
// and stormDeadline the deadline of each (its context's).
const (
	stormDials    = 200
	stormDeadline = 60 * time.Second
	stormMsgLen   = 16 // the bytes each connection moves each way
)

// TestWireRsocketDialStorm: stormDials DialContext calls at once from
// side 1's guest to one Listener on side 0's, each with a context
// deadline. Each dial either connects, and its stormMsgLen bytes come back
// echoed by the listener's side, or fails with a *net.OpError of the
// dial (a refused request: the listener's bound on handshakes, or the
// deadline); none returns later than its deadline allows. The two sides
// agree on how many connections moved data, and nothing is left on
// either guest's device afterwards. A connection the listener's side
// dropped after the dial succeeded here must end reset (reset).
func TestWireRsocketDialStorm(t *testing.T) {
	w, dev := rxetest.Wire(t)
	checkNoLeaks(t, &dev)
	start := time.Now()
	if w.Side == 0 {
		l, err := Listen("rdma", netip.AddrPortFrom(w.Self, 0).String())
		if err != nil {
			w.Exchange(t, t.Name()+"/port", "")
			t.Fatal(err)
		}
		var echoed atomic.Int32
		var handlers sync.WaitGroup
		acceptDone := make(chan error, 1)
		go func() {
			for {
				c, err := l.AcceptConn(context.Background())
				if err != nil {
					acceptDone <- err
					return
				}
				handlers.Add(1)
				go func() {
					defer handlers.Done()
					defer c.Close()
					c.SetDeadline(time.Now().Add(stormDeadline))
					b := make([]byte, stormMsgLen)
					if _, err := io.ReadFull(c, b); err != nil {
						return // the client gave up (its deadline), or its dial failed late
					}
					if _, err := c.Write(b); err != nil {
						return
					}
					// The client closes once it has read the echo.
					if n, err := c.Read(b); n != 0 || err != io.EOF {
						t.Errorf("after the echo: %d bytes, %v; want EOF", n, err)
						return
					}
					echoed.Add(1)
				}()
			}
		}()
		wireAnnounce(t, w, l)
		verified := w.Exchange(t, t.Name()+"/verified", "")
		if err := l.Close(); err != nil {
			t.Errorf("close the listener: %v", err)
		}
		if err := <-acceptDone; !errors.Is(err, net.ErrClosed) {
			t.Errorf("accept: %v; want net.ErrClosed", err)
		}
		handlers.Wait()
		if n := strconv.Itoa(int(echoed.Load())); n != verified {
			t.Fatalf("%s connections echoed here, %s verified by the dialing side", n, verified)
		}
		t.Logf("%s of %d dials echoed in %v", verified, stormDials, time.Since(start).Round(time.Millisecond))
		return
	}
	addr := wirePeer(t, w).String()
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for i := range stormDials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			what, err := stormDial(addr, i)
			if err != nil {
				t.Errorf("dial %d: %v", i, err)
				what = "failed the test"
			}
			mu.Lock()
			outcomes[what]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	verified := outcomes["verified"]
	w.Exchange(t, t.Name()+"/verified", strconv.Itoa(verified))
	t.Logf("%d dials in %v: %v", stormDials, time.Since(start).Round(time.Millisecond), outcomes)
	if verified == 0 {
		t.Fatalf("no dial moved data: %v", outcomes)
	}
}

// stormDial is one dial of the storm, the i-th: on success it moves
// stormMsgLen bytes naming i and checks their echo ("verified"); a
// failed dial must be a *net.OpError of the dial, returned within its
// deadline (what names the cause: "refused", "deadline"). err is what
// breaks the test's contract.
func stormDial(addr string, i int) (what string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), stormDeadline)
	defer cancel()
	t0 := time.Now()
	c, err := DialContext(ctx, "rdma", addr)
	if d := time.Since(t0); d > stormDeadline+5*time.Second {
		return "", fmt.Errorf("returned after %v, past its deadline of %v (%v)", d, stormDeadline, err)
	}
	if err != nil {
		var op *net.OpError
		switch {
		case !errors.As(err, &op) || op.Op != "dial":
			return "", fmt.Errorf("not a *net.OpError of the dial: %T %v", err, err)
		case errors.Is(err, unix.ECONNREFUSED):
			return "refused", nil
		case errors.Is(err, context.DeadlineExceeded):
			return "deadline", nil
		}
		return "other: " + err.Error(), nil
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(stormDeadline))
	msg := []byte(fmt.Sprintf("storm dial %4d\n", i))[:stormMsgLen]
	got := make([]byte, len(msg))
	if _, err := c.Write(msg); err != nil {
		return reset("write", err)
	}
	if _, err := io.ReadFull(c, got); err != nil {
		return reset("read the echo", err)
	}
	if !bytes.Equal(got, msg) {
		return "", fmt.Errorf("echo %q, sent %q", got, msg)
	}
	if err := c.Close(); err != nil {
		return "", fmt.Errorf("close: %v", err)
	}
	return "verified", nil
}

// reset is how a connection whose dial succeeded may still fail: reset
// by the listener's side, whose handshake gave up (ListenConfig's
// HandshakeTimeout, which a storm on a TCG guest can outlast) after its
// REP had gone out and the client's RTU made the dial succeed here, as
// a TCP server's RST can follow its SYN-ACK. That is a *net.OpError
// matching ECONNRESET; anything else breaks the test's contract.
func reset(op string, err error) (string, error) {
	var oe *net.OpError
	if errors.As(err, &oe) && errors.Is(err, unix.ECONNRESET) {
		return "reset after the dial", nil
	}
	return "", fmt.Errorf("%s: %v", op, err)
}
