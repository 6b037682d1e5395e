package uverbs_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// TestIntegrationDataPathLeavesNothing: 200 cycles of a context with a
// completion channel, a CQ, a connected QP, an SRQ, a memory window, a
// message and cancelled waits, closed object by object in one half of the
// cycles and by the context's Close alone in the other, leave the open
// fds, the goroutines and the kernel's objects (RDMA netlink's resource
// summary of the device) as they were.
func TestIntegrationDataPathLeavesNothing(t *testing.T) {
	testenv.RequireRDMA(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	d, err := uverbs.DeviceByName("rxe0")
	if err != nil {
		t.Fatal(err)
	}
	summary := func() map[nldev.ResourceType]uint64 {
		s, err := nl.ResourceSummaryOf(d.Index)
		if err != nil {
			t.Fatal(err)
		}
		m := map[nldev.ResourceType]uint64{}
		for _, c := range s.Counts {
			m[c.Type] = c.Count
		}
		return m
	}
	cycle(t, d, true) // warm up what the first cycle opens for good
	// Files other tests dropped without closing would be closed by their
	// finalizers in the middle of the count: let that happen first.
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	fds, gor, objs := openFDs(t), runtime.NumGoroutine(), summary()
	for i := range 200 {
		cycle(t, d, i%2 == 0)
	}
	if got := openFDs(t); got != fds {
		t.Errorf("open fds %d -> %d", fds, got)
	}
	// Goroutines that woke from a cancelled wait may still be on their
	// way out.
	testenv.WaitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= gor })
	if diff := cmp.Diff(objs, summary()); diff != "" {
		t.Errorf("the kernel's objects of %s changed (-before +after):\n%s", d.Name, diff)
	}
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// cycle makes, uses and closes one context's objects; each closes them
// one by one, else the context's Close alone.
func cycle(t *testing.T, d uverbs.Device, each bool) {
	t.Helper()
	c, err := uverbs.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	var closers []interface{ Close() error }
	must := func(x interface{ Close() error }, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		closers = append(closers, x)
	}
	pd, err := c.AllocPD()
	must(pd, err)
	buf, err := membuf.New(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	mr, err := buf.Register(pd, uverbs.AccessLocalWrite|uverbs.AccessMWBind)
	must(mr, err)
	ch, err := c.CreateCompChannel()
	must(ch, err)
	cq, err := c.CreateCQ(uverbs.CQAttr{CQE: 8, CompChannel: ch})
	must(cq, err)
	srq, err := pd.CreateSRQ(uverbs.SRQAttr{MaxWR: 4, MaxSGE: 1})
	must(srq, err)
	qp, err := pd.CreateQP(uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq, SRQ: srq,
		Cap: uverbs.QPCap{MaxSendWR: 4, MaxSendSGE: 1}})
	must(qp, err)
	mw, err := pd.AllocMW(uverbs.MWType2)
	must(mw, err)
	table, err := c.QueryGIDTable()
	if err != nil || len(table) == 0 {
		t.Fatalf("gid table: %v, %v", table, err)
	}
	gid := table[0]
	for _, e := range table {
		if e.Type == ib.GIDTypeRoCEv2 {
			gid = e
			break
		}
	}
	o := uverbs.ConnectOptions{SGIDIndex: uint8(gid.Index)}
	if err := qp.Init(o); err != nil {
		t.Fatal(err)
	}
	if err := qp.Connect(o, uverbs.Peer{QPN: qp.Num(), GID: gid.GID}); err != nil {
		t.Fatal(err)
	}
	sge := []uverbs.SGE{{Addr: buf.Addr(0), Length: 64, LKey: mr.LKey()}}
	if err := srq.PostRecv(&uverbs.RecvWR{ID: 1, SGE: sge}); err != nil {
		t.Fatal(err)
	}
	if err := cq.RequestNotify(false); err != nil {
		t.Fatal(err)
	}
	if err := qp.PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: sge}); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := ch.GetEvent(wait); err != nil {
		t.Fatal(err)
	}
	cq.AckEvents(1)
	// A wait cancelled, and one ended by the context's close.
	short, stop := context.WithCancel(context.Background())
	stop()
	if _, err := ch.GetEvent(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	ended := make(chan error, 1)
	go func() { _, err := c.GetEvent(context.Background()); ended <- err }()
	if each {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i].Close(); err != nil {
				t.Fatalf("close %T: %v", closers[i], err)
			}
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("async wait at close: %v", err)
	}
	if !each {
		// The objects died with the context; their Close is harmless.
		for _, x := range closers {
			if err := x.Close(); err != nil {
				t.Fatalf("close %T after the context: %v", x, err)
			}
		}
	}
}
