package uverbs_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// env is one device opened for a test: a context, a PD and 1 MiB of
// registered memory.
type env struct {
	c    *uverbs.Context
	pd   *uverbs.PD
	buf  *membuf.Buffer
	mr   *membuf.MR
	sgid uverbs.GIDEntry
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvAccess(t, uverbs.AccessLocalWrite|uverbs.AccessRemoteWrite|uverbs.AccessRemoteRead|uverbs.AccessRemoteAtomic)
}

// newEnvAccess is newEnv with the region registered with access.
func newEnvAccess(t testing.TB, access uverbs.Access) *env {
	t.Helper()
	testenv.RequireRDMA(t)
	c, err := uverbs.OpenName("rxe0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	buf, err := membuf.New(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := buf.Close(); err != nil {
			t.Errorf("buffer close: %v", err)
		}
	})
	mr, err := buf.Register(pd, access)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	gids, err := c.QueryGIDTable()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{c: c, pd: pd, buf: buf, mr: mr}
	for _, g := range gids {
		if g.Type == ib.GIDTypeRoCEv2 && g.GID[0] == 0xfe && g.GID[1] == 0x80 && g.Port == 1 {
			e.sgid = g
			return e
		}
	}
	t.Fatalf("no link-local RoCE v2 GID in %v", gids)
	return nil
}

// sge is the SGE for [off, off+n) of the env's buffer.
func (e *env) sge(off, n int) uverbs.SGE {
	return uverbs.SGE{Addr: e.buf.Addr(off), Length: uint32(n), LKey: e.mr.LKey()}
}

// cq is a CQ with its own completion channel.
type cq struct {
	*uverbs.CQ
	ch *uverbs.CompChannel
}

func (e *env) newCQ(t testing.TB, n int) *cq {
	t.Helper()
	ch, err := e.c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.c.CreateCQ(uverbs.CQAttr{CQE: n, CompChannel: ch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close(); ch.Close() })
	return &cq{x, ch}
}

// waitEvent waits for the CQ's next event until deadline and
// acknowledges it; an event for another CQ fails the test.
func (q *cq) waitEvent(t *testing.T, deadline time.Time) error {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	got, err := q.ch.GetEvent(ctx)
	if err != nil {
		return err
	}
	if got != q.CQ {
		t.Fatalf("event for cq %v, want %v", got, q.CQ)
	}
	q.AckEvents(1)
	return nil
}

// wait returns the next n completions, sleeping on CQ events; it fails
// the test after 5 s.
func (q *cq) wait(t *testing.T, n int) []uverbs.WC {
	t.Helper()
	wc := make([]uverbs.WC, n)
	got := 0
	deadline := time.Now().Add(5 * time.Second)
	for got < n {
		k, err := q.Poll(wc[got:])
		if err != nil {
			t.Fatal(err)
		}
		got += k
		if got == n {
			break
		}
		if err := q.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		if k, err = q.Poll(wc[got:]); err != nil {
			t.Fatal(err)
		}
		if got += k; got == n {
			break
		}
		if err := q.waitEvent(t, deadline); err != nil {
			t.Fatalf("waiting for completion %d of %d: %v", got+1, n, err)
		}
	}
	return wc
}

// none checks that no completion arrives within d.
func (q *cq) none(t *testing.T, d time.Duration) {
	t.Helper()
	var wc [1]uverbs.WC
	deadline := time.Now().Add(d)
	for {
		if err := q.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		if n, _ := q.Poll(wc[:]); n != 0 {
			t.Fatalf("unexpected completion %+v", wc[0])
		}
		err := q.waitEvent(t, deadline)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		if err != nil {
			t.Fatalf("wanted no completion, got %v", err)
		}
		// An event armed by an earlier wait whose completion was then
		// found by polling may still arrive; it is stale unless the
		// queue now holds a completion.
		if n, _ := q.Poll(wc[:]); n != 0 {
			t.Fatalf("wanted no completion, got %+v", wc[0])
		}
	}
}

type qpOpts struct {
	typ     ib.QPType
	srq     *uverbs.SRQ
	send    int
	recv    int
	sge     int
	inline  int
	timeout int
	retry   int
}

func (e *env) newQP(t testing.TB, scq, rcq *cq, o qpOpts) *uverbs.QP {
	t.Helper()
	if o.typ == 0 {
		o.typ = ib.QPTypeRC
	}
	init := uverbs.QPInit{Type: o.typ, SendCQ: scq.CQ, RecvCQ: rcq.CQ, Cap: uverbs.QPCap{
		MaxSendWR: uint32(max(o.send, 16)), MaxRecvWR: uint32(max(o.recv, 16)), MaxSendSGE: uint32(max(o.sge, 1)),
		MaxRecvSGE: uint32(max(o.sge, 1)), MaxInlineData: uint32(o.inline)}}
	if o.srq != nil {
		init.SRQ, init.Cap.MaxRecvWR, init.Cap.MaxRecvSGE = o.srq, 0, 0
	}
	qp, err := e.pd.CreateQP(init)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qp.Close() })
	return qp
}

// connect takes qp to RTS talking to the QP numbered dest on the same
// device, with the library's Init and Connect.
func (e *env) connect(t testing.TB, qp *uverbs.QP, dest uint32, o qpOpts) {
	t.Helper()
	co := uverbs.ConnectOptions{Access: uverbs.AccessRemoteWrite | uverbs.AccessRemoteRead | uverbs.AccessRemoteAtomic,
		SGIDIndex: uint8(e.sgid.Index), MinRNRTimer: 1, MaxRdAtomic: 4, MaxDestRdAtomic: 4}
	if o.timeout != 0 {
		co.Timeout, co.RetryCnt, co.RNRRetry = o.timeout, o.retry, o.retry
	}
	if err := qp.Init(co); err != nil {
		t.Fatal(err)
	}
	if err := qp.Connect(co, uverbs.Peer{QPN: dest, GID: e.sgid.GID}); err != nil {
		t.Fatal(err)
	}
}

// pair is two connected QPs, each with its own CQ.
func (e *env) pair(t testing.TB, o qpOpts) (a, b *uverbs.QP, ca, cb *cq) {
	t.Helper()
	ca, cb = e.newCQ(t, 256), e.newCQ(t, 256)
	a, b = e.newQP(t, ca, ca, o), e.newQP(t, cb, cb, o)
	e.connect(t, a, b.Num(), o)
	e.connect(t, b, a.Num(), o)
	return a, b, ca, cb
}

func checkWC(t *testing.T, wc uverbs.WC, id uint64, op uverbs.WCOpcode, status uverbs.WCStatus) {
	t.Helper()
	// The opcode of an error completion is undefined (rxe reports 0).
	if wc.ID != id || (status == uverbs.WCSuccess && wc.Opcode != op) || wc.Status != status {
		t.Fatalf("completion %+v (%v, %v), want id %d %v %v", wc, wc.Opcode, wc.Status, id, op, status)
	}
}

// within is a context that times out after d, cancelled when the test
// ends.
func within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
