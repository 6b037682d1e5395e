package rsocket

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// qpTransport is a Conn's QP's ACK timeout exponent and retry count.
func qpTransport(t *testing.T, c *Conn) (timeout, retry uint8) {
	t.Helper()
	var attr *uverbs.QPAttr
	if err := c.Control(func(_ *rdma.ID, qp *uverbs.QP) (err error) {
		attr, err = qp.Query(uverbs.QPAttrTimeout | uverbs.QPAttrRetryCnt)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return attr.Timeout, attr.RetryCnt
}

// TestIntegrationRSTransport: the kernel gives both QPs the ACK timeout
// and retry count the package documents, and each Conn's failure bound
// is twice its QP's budget unless set. By default both carry 2^17
// (about 537 ms) and 7 retries (a DefaultFailureBound); a Dialer's
// RetryCount reaches the accepting side's QP too (the request carries
// it), while each side's AckTimeout and FailureBound stay its own (the
// listener sets the ACK timeout on each accepted id).
// A retry count beyond 7 fails the dial before anything is sent.
func TestIntegrationRSTransport(t *testing.T) {
	addr, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	listen := func(lc *ListenConfig) *Listener {
		l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(addr, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	for _, c := range []struct {
		name                   string
		lc                     ListenConfig
		d                      Dialer
		cliTimeout, srvTimeout uint8 // 0: the kernel's, logged
		retry                  uint8
		cliBound, srvBound     time.Duration // 0: twice the transport's budget
	}{
		{"defaults", ListenConfig{}, Dialer{}, 17, 17, 7, 0, 0},
		{"set", ListenConfig{AckTimeout: time.Second}, Dialer{AckTimeout: 8 * time.Millisecond, RetryCount: 3}, 11, 18, 3, 0, 0},
		{"no-retries", ListenConfig{AckTimeout: 200 * time.Millisecond}, Dialer{RetryCount: -1}, 17, 16, 0, 0, 0},
		{"kernel", ListenConfig{AckTimeout: -1}, Dialer{AckTimeout: -1, RetryCount: 7}, 0, 0, 7, 0, 0},
		{"bounds", ListenConfig{FailureBound: -1}, Dialer{FailureBound: 3 * time.Second}, 17, 17, 7, 3 * time.Second, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cli, srv := rsPair(t, listen(&c.lc), &c.d)
			for _, q := range []struct {
				what    string
				c       *Conn
				timeout uint8
				bound   time.Duration
			}{{"dialer's", cli, c.cliTimeout, c.cliBound}, {"accepted", srv, c.srvTimeout, c.srvBound}} {
				to, r := qpTransport(t, q.c)
				t.Logf("%s QP: ACK timeout 2^%d, %d retries", q.what, to, r)
				if q.timeout != 0 && to != q.timeout || r != c.retry {
					t.Errorf("%s QP: ACK timeout 2^%d, %d retries; want 2^%d, %d", q.what, to, r, q.timeout, c.retry)
				}
				q.c.mu.Lock()
				bound, timer := q.c.dog.bound, q.c.dog.timer != nil
				q.c.mu.Unlock()
				want := q.bound
				switch {
				case want == 0:
					want = 2 * ackTimeoutUnit << to * time.Duration(r+1)
				case want < 0:
					want = 0 // none
				}
				if bound != want || timer != (want > 0) {
					t.Errorf("%s Conn's failure bound %v (a timer: %v), want %v", q.what, bound, timer, want)
				}
				if c.name == "defaults" && bound != DefaultFailureBound {
					t.Errorf("%s Conn's failure bound %v by default, want %v", q.what, bound, DefaultFailureBound)
				}
			}
		})
	}
	l := listen(&ListenConfig{})
	if _, err := (&Dialer{RetryCount: 8}).DialContext(context.Background(), "rdma", l.Addr().String()); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("dial with 8 retries: %v, want EINVAL", err)
	}
}

// TestIntegrationRSPeerSilent: a peer whose QP stops answering (moved to
// RESET under its Conn: rxe drops what comes for it without a word)
// fails the other side's Write and its blocked Read with ErrPeerSilent
// within the failure bound, although rxe retries for ever at the
// default retry count; the bound follows the ACK timeout asked for.
func TestIntegrationRSPeerSilent(t *testing.T) {
	addr, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	l, err := Listen("rdma", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	// 2 × 8 × 2^11 × 4.096 µs: about 134 ms.
	cli, srv := rsPair(t, l, &Dialer{AckTimeout: 8 * time.Millisecond, KeepAlive: -1})
	const bound = 2 * 8 * ackTimeoutUnit << 11
	if _, r := qpTransport(t, cli); r != DefaultRetryCount {
		t.Fatalf("the dialer's QP retries %d times, want %d", r, DefaultRetryCount)
	}
	// The watchdog counts from the oldest send in flight: a send of the
	// handshake still unacknowledged when the peer goes silent would
	// start the clock before the test's; wait until none is in flight.
	testenv.WaitFor(t, "the dialer's sends acknowledged", func() bool {
		cli.mu.Lock()
		defer cli.mu.Unlock()
		if cli.progress() {
			cli.broadcast()
		}
		return cli.sendsInFlight() == 0
	})
	start := time.Now()
	if err := srv.Control(func(_ *rdma.ID, qp *uverbs.QP) error {
		return qp.Modify(&uverbs.QPAttr{State: ib.QPStateReset}, uverbs.QPAttrState)
	}); err != nil {
		t.Fatal(err)
	}
	cli.SetDeadline(time.Now().Add(20 * time.Second))
	read := make(chan error, 1)
	go func() {
		_, err := cli.Read(make([]byte, 1))
		read <- err
	}()
	var werr error
	for werr == nil {
		_, werr = cli.Write(make([]byte, 1000))
	}
	took := time.Since(start)
	rerr := <-read
	t.Logf("Write failed after %v: %v; Read: %v", took, werr, rerr)
	for _, err := range []error{werr, rerr} {
		if !errors.Is(err, ErrPeerSilent) || !errors.Is(err, unix.ETIMEDOUT) {
			t.Errorf("%v, want ErrPeerSilent", err)
		}
	}
	// The guest's timers under emulation get a second's slack.
	if took < bound || took > bound+time.Second {
		t.Errorf("the silent peer noticed after %v; the bound is %v", took, time.Duration(bound))
	}
}
