package rdma

import (
	"bytes"
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/uverbs"
)

// checkNoLeaks registers, before the test's own, the cleanup that runs
// after all of them: the fds and goroutines the test made, and its
// kernel objects on device dev (unless dev is nil: RDMA netlink's
// resource summary, what `rdma resource` shows, cm_ids, QPs, CQs, PDs,
// MRs and the rest), must be gone.
func checkNoLeaks(t *testing.T, dev *uint32) {
	t.Helper()
	FreeDevices(mustGetDevices(t)) // the device cache's contexts are opened once per process
	rxetest.NoLeaks(t, dev)
}

// TestIntegrationCMBacklog: a listener with backlog 1 and two requests
// nobody reads. What the kernel does: the queued CONNECT_REQUEST holds
// the one slot; the second REQ is dropped without a reject (ucma answers
// ENOMEM, which the IB CM treats as "let the peer retry"), so the second
// client hears nothing; once the first request is read the slot is free
// and the second client's retried REQ comes as a CONNECT_REQUEST.
func TestIntegrationCMBacklog(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	sch, cch1, cch2 := newChannel(t), newChannel(t), newChannel(t)
	l := newID(t, sch)
	if err := l.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(1); err != nil {
		t.Fatal(err)
	}
	a, err := l.QueryAddr()
	if err != nil {
		t.Fatal(err)
	}
	dial := func(ch *EventChannel, data string) {
		id := newID(t, ch)
		resolve(t, ch, id, a.Src)
		newEndpoint(t, id)
		if err := id.Connect(context.Background(), &ConnParam{PrivateData: []byte(data), RetryCount: 7, RNRRetryCount: 7}); err != nil {
			t.Fatal(err)
		}
	}
	dial(cch1, "one")
	time.Sleep(300 * time.Millisecond) // the first REQ takes the slot
	dial(cch2, "two")
	time.Sleep(500 * time.Millisecond)

	first := next(t, sch, EventConnectRequest)
	if !bytes.HasPrefix(first.PrivateData, []byte("one")) {
		t.Fatalf("first request's data %q", first.PrivateData)
	}
	first.ID.Close() // rejected: the first client gets REJECTED
	next(t, cch1, EventRejected)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	if ev, err := cch2.GetEvent(ctx); err == nil {
		t.Fatalf("the dropped request's client got %v (%v); want nothing while its CM retries", ev.Type, ev.Status)
	}
	cancel()
	start := time.Now()
	second := next(t, sch, EventConnectRequest) // the CM's retry, some seconds later
	if !bytes.HasPrefix(second.PrivateData, []byte("two")) {
		t.Fatalf("second request's data %q", second.PrivateData)
	}
	t.Logf("the dropped request came again after %v", time.Since(start))
	second.ID.Close()
	next(t, cch2, EventRejected)
}

// TestIntegrationCMPeerExit: the server closes its id of an established
// connection; the client gets DISCONNECTED, its QP is in the error
// state, and it disconnects and closes cleanly.
func TestIntegrationCMPeerExit(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, addr)
	srv, cli, _, ce := connectPair(t, sch, cch, dst, nil)
	if err := srv.Close(); err != nil {
		t.Fatalf("server Close: %v", err)
	}
	if ev := next(t, cch, EventDisconnected); ev.ID != cli {
		t.Fatal("DISCONNECTED for another id")
	}
	if err := cli.Disconnect(); err != nil {
		t.Fatalf("Disconnect after the peer left: %v", err)
	}
	if st, err := ce.qp.Query(uverbs.QPAttrState); err != nil || st.State != ib.QPStateErr {
		t.Fatalf("QP after the peer left: %v (%v), want ERR", st.State, err)
	}
	if err := cli.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
