package rsocket

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/rxetest"
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
// and retry count the package documents. By default both carry 2^17
// (about 537 ms) and 6 retries; a Dialer's RetryCount reaches the
// accepting side's QP too (the request carries it), while each side's
// AckTimeout stays its own (the listener sets it on each accepted id).
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
	}{
		{"defaults", ListenConfig{}, Dialer{}, 17, 17, 6},
		{"set", ListenConfig{AckTimeout: time.Second}, Dialer{AckTimeout: 8 * time.Millisecond, RetryCount: 3}, 11, 18, 3},
		{"no-retries", ListenConfig{AckTimeout: 200 * time.Millisecond}, Dialer{RetryCount: -1}, 17, 16, 0},
		{"kernel", ListenConfig{AckTimeout: -1}, Dialer{AckTimeout: -1, RetryCount: 7}, 0, 0, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			cli, srv := rsPair(t, listen(&c.lc), &c.d)
			for _, q := range []struct {
				what    string
				c       *Conn
				timeout uint8
			}{{"dialer's", cli, c.cliTimeout}, {"accepted", srv, c.srvTimeout}} {
				to, r := qpTransport(t, q.c)
				t.Logf("%s QP: ACK timeout 2^%d, %d retries", q.what, to, r)
				if q.timeout != 0 && to != q.timeout || r != c.retry {
					t.Errorf("%s QP: ACK timeout 2^%d, %d retries; want 2^%d, %d", q.what, to, r, q.timeout, c.retry)
				}
			}
		})
	}
	l := listen(&ListenConfig{})
	if _, err := (&Dialer{RetryCount: 8}).DialContext(context.Background(), "rdma", l.Addr().String()); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("dial with 8 retries: %v, want EINVAL", err)
	}
}
