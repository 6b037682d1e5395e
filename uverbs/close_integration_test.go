package uverbs_test

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// noLeaks records the open fds, the goroutines, the mappings of uverbs
// char devices and the kernel's objects of rxe0 (RDMA netlink's resource
// summary) now, and checks when the test ends, after its other cleanups,
// that they are as they were. Call it before anything the test opens.
func noLeaks(t *testing.T) {
	t.Helper()
	testenv.RequireRDMA(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	d, err := uverbs.DeviceByName("rxe0")
	if err != nil {
		nl.Close()
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
	// Files other tests dropped without closing would be closed by their
	// finalizers in the middle of the count: let that happen first.
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	fds, gor, maps, objs := openFDs(t), runtime.NumGoroutine(), uverbsMappings(t), summary()
	t.Cleanup(func() {
		defer nl.Close()
		testenv.WaitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= gor })
		if got := openFDs(t); got != fds {
			t.Errorf("open fds %d -> %d", fds, got)
		}
		if got := uverbsMappings(t); got != maps {
			t.Errorf("mappings of uverbs char devices %d -> %d", maps, got)
		}
		if diff := cmp.Diff(objs, summary()); diff != "" {
			t.Errorf("the kernel's objects of %s changed (-before +after):\n%s", d.Name, diff)
		}
	})
}

// uverbsMappings counts the process's mappings of uverbs char devices
// (the queues rxe shares): one left behind keeps its context, and every
// object of it, alive in the kernel.
func uverbsMappings(t *testing.T) int {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.Contains(s.Text(), "/dev/infiniband/uverbs") {
			n++
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

type closer interface{ Close() error }

// together runs fns at once (released by one barrier) and returns their
// errors.
func together(fns ...func() error) []error {
	errs := make([]error, len(fns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn()
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// objectSet is one of each object on a fresh context.
type objectSet struct {
	c    *uverbs.Context
	pd   *uverbs.PD
	buf  *membuf.Buffer
	mr   *membuf.MR
	ch   *uverbs.CompChannel
	cq   *uverbs.CQ
	srq  *uverbs.SRQ
	qp   *uverbs.QP
	mw   *uverbs.MW
	ah   *uverbs.AH
	sgid uverbs.GIDEntry
}

func newObjectSet(t *testing.T) *objectSet {
	t.Helper()
	e := newEnvAccess(t, uverbs.AccessLocalWrite|uverbs.AccessMWBind)
	s := &objectSet{c: e.c, pd: e.pd, buf: e.buf, mr: e.mr, sgid: e.sgid}
	var err error
	if s.ch, err = s.c.CreateCompChannel(); err != nil {
		t.Fatal(err)
	}
	if s.cq, err = s.c.CreateCQ(uverbs.CQAttr{CQE: 16, CompChannel: s.ch}); err != nil {
		t.Fatal(err)
	}
	if s.srq, err = s.pd.CreateSRQ(uverbs.SRQAttr{MaxWR: 4, MaxSGE: 1}); err != nil {
		t.Fatal(err)
	}
	if s.qp, err = s.pd.CreateQP(uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: s.cq, RecvCQ: s.cq, SRQ: s.srq,
		Cap: uverbs.QPCap{MaxSendWR: 4, MaxSendSGE: 1}}); err != nil {
		t.Fatal(err)
	}
	if s.mw, err = s.pd.AllocMW(uverbs.MWType2); err != nil {
		t.Fatal(err)
	}
	if s.ah, err = s.pd.CreateAH(s.ahAttr()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, x := range []closer{s.qp, s.mw, s.ah, s.srq, s.cq, s.ch} {
			x.Close()
		}
	})
	return s
}

func (s *objectSet) ahAttr() uverbs.AHAttr {
	return uverbs.AHAttr{IsGlobal: true, DGID: s.sgid.GID, SGIDIndex: uint8(s.sgid.Index), HopLimit: 64, Port: 1}
}

// closeAll closes x from n goroutines at once: each Close succeeds.
func closeAll(t *testing.T, what string, x closer, n int) {
	t.Helper()
	fns := make([]func() error, n)
	for i := range fns {
		fns[i] = x.Close
	}
	for i, err := range together(fns...) {
		if err != nil {
			t.Fatalf("close %d of %d of the %s: %v", i, n, what, err)
		}
	}
}

func wantClosed(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, os.ErrClosed) {
		t.Fatalf("%s: %v, want an error matching os.ErrClosed", what, err)
	}
}

// TestIntegrationCloseConcurrentCalls: eight goroutines closing the same
// object at once all succeed, for every kind of object, closed one by
// one or by the context alone; the object then reports os.ErrClosed,
// and nothing is left: no fd, goroutine, mapping or kernel object.
func TestIntegrationCloseConcurrentCalls(t *testing.T) {
	noLeaks(t)
	t.Run("each", func(t *testing.T) {
		s := newObjectSet(t)
		for _, o := range []struct {
			what string
			x    closer
		}{{"qp", s.qp}, {"mw", s.mw}, {"ah", s.ah}, {"srq", s.srq}, {"cq", s.cq}, {"channel", s.ch},
			{"mr", s.mr}, {"pd", s.pd}} {
			closeAll(t, o.what, o.x, 8)
		}
		_, err := s.qp.Query(uverbs.QPAttrState)
		wantClosed(t, "query of a closed qp", err)
		_, err = s.cq.Poll(make([]uverbs.WC, 1))
		wantClosed(t, "poll of a closed cq", err)
		_, err = s.srq.Query()
		wantClosed(t, "query of a closed srq", err)
		_, err = s.ch.GetEvent(context.Background())
		wantClosed(t, "wait on a closed channel", err)
		_, err = s.pd.AllocMW(uverbs.MWType1)
		wantClosed(t, "alloc mw in a closed pd", err)
		closeAll(t, "context", s.c, 8)
		_, err = s.c.AllocPD()
		wantClosed(t, "alloc pd on a closed context", err)
	})
	t.Run("context", func(t *testing.T) {
		s := newObjectSet(t)
		closeAll(t, "context", s.c, 8)
		_, err := s.cq.Poll(make([]uverbs.WC, 1))
		wantClosed(t, "poll of a cq of a closed context", err)
		err = s.qp.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpSend})
		wantClosed(t, "post to a qp of a closed context", err)
		err = s.srq.PostRecv(&uverbs.RecvWR{ID: 1})
		wantClosed(t, "post to an srq of a closed context", err)
		_, err = s.ch.GetEvent(context.Background())
		wantClosed(t, "wait on a channel of a closed context", err)
		// The objects died with the context; their Closes, at once,
		// are harmless.
		for _, o := range []struct {
			what string
			x    closer
		}{{"qp", s.qp}, {"mw", s.mw}, {"ah", s.ah}, {"srq", s.srq}, {"cq", s.cq}, {"channel", s.ch},
			{"mr", s.mr}, {"pd", s.pd}} {
			closeAll(t, o.what+" of a closed context", o.x, 4)
		}
	})
}

// TestIntegrationCloseContextRacesCreate: creations of every kind run
// while the context is closed under them. Each creation either makes its
// object or fails with an error matching os.ErrClosed; the objects made
// close without error; and nothing is left behind: in particular no
// queue mapping of a CQ, QP or SRQ made while the context closed (one
// would keep the context and all its objects alive in the kernel).
func TestIntegrationCloseContextRacesCreate(t *testing.T) {
	noLeaks(t)
	buf, err := membuf.New(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Close() })
	made := map[string]int{}
	for round := range 40 {
		c, err := uverbs.OpenName("rxe0")
		if err != nil {
			t.Fatal(err)
		}
		pd, err := c.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		cq, err := c.CreateCQ(uverbs.CQAttr{CQE: 8})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := c.CreateCompChannel()
		if err != nil {
			t.Fatal(err)
		}
		gids, err := c.QueryGIDTable()
		if err != nil || len(gids) == 0 {
			t.Fatalf("gid table: %v, %v", gids, err)
		}
		ahAttr := uverbs.AHAttr{IsGlobal: true, DGID: gids[0].GID, SGIDIndex: uint8(gids[0].Index), HopLimit: 64, Port: 1}
		var mu sync.Mutex
		var objs []closer
		// Each creator makes objects until the context's Close stops it.
		creator := func(kind string, create func() (closer, error)) func() error {
			return func() error {
				for {
					x, err := create()
					if err != nil {
						if !errors.Is(err, os.ErrClosed) {
							return err
						}
						return nil
					}
					mu.Lock()
					objs = append(objs, x)
					made[kind]++
					mu.Unlock()
				}
			}
		}
		creators := []func() error{
			creator("cq", func() (closer, error) { return c.CreateCQ(uverbs.CQAttr{CQE: 4, CompChannel: ch}) }),
			creator("qp", func() (closer, error) {
				return pd.CreateQP(uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq,
					Cap: uverbs.QPCap{MaxSendWR: 2, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1}})
			}),
			creator("srq", func() (closer, error) { return pd.CreateSRQ(uverbs.SRQAttr{MaxWR: 2, MaxSGE: 1}) }),
			creator("channel", func() (closer, error) { return c.CreateCompChannel() }),
			creator("pd", func() (closer, error) { return c.AllocPD() }),
			creator("mr", func() (closer, error) { return pd.RegMR(buf.Bytes(), uverbs.AccessLocalWrite) }),
			creator("mw", func() (closer, error) { return pd.AllocMW(uverbs.MWType1) }),
			creator("ah", func() (closer, error) { return pd.CreateAH(ahAttr) }),
		}
		delay := time.Duration(rand.IntN(3000)) * time.Microsecond
		errs := together(append(creators, func() error { time.Sleep(delay); return c.Close() })...)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: goroutine %d: %v", round, i, err)
			}
		}
		for _, x := range append(objs, cq, ch, pd) {
			if err := x.Close(); err != nil {
				t.Fatalf("round %d: close %T after the context: %v", round, x, err)
			}
		}
	}
	t.Logf("objects made before the context closed: %v", made)
	if len(made) == 0 {
		t.Fatal("no creation ever won the race")
	}
}

// TestIntegrationCloseRacesCreate: the Close of an object races the
// creation of one that names it (a QP on a CQ, in a PD, with an SRQ; an
// MR, MW, AH or SRQ in a PD; a CQ on a channel). Either the creation
// wins, and the kernel then refuses the Close (EBUSY) until the new
// object is closed, or the Close wins and the creation fails with an
// error matching os.ErrClosed; never another error, never both. A CQ
// may be made on a channel closed meanwhile (the kernel keeps the
// channel for it). Two creations naming two CQs in opposite orders while
// both CQs are closed do not deadlock.
func TestIntegrationCloseRacesCreate(t *testing.T) {
	noLeaks(t)
	e := newEnvAccess(t, uverbs.AccessLocalWrite|uverbs.AccessMWBind)
	shared, err := e.c.CreateCQ(uverbs.CQAttr{CQE: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	qpIn := func(pd *uverbs.PD, scq, rcq *uverbs.CQ, srq *uverbs.SRQ) (closer, error) {
		init := uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: scq, RecvCQ: rcq, SRQ: srq,
			Cap: uverbs.QPCap{MaxSendWR: 2, MaxSendSGE: 1}}
		if srq == nil {
			init.Cap.MaxRecvWR, init.Cap.MaxRecvSGE = 2, 1
		}
		return pd.CreateQP(init)
	}
	ahAttr := uverbs.AHAttr{IsGlobal: true, DGID: e.sgid.GID, SGIDIndex: uint8(e.sgid.Index), HopLimit: 64, Port: 1}
	type race struct {
		name   string
		bothOK bool // the parent's Close may succeed beside the creation
		// parent makes a fresh parent; create makes its dependant.
		parent func(t *testing.T) closer
		create func(parent closer) (closer, error)
	}
	newPD := func(t *testing.T) closer {
		pd, err := e.c.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		return pd
	}
	races := []race{
		{name: "qp on cq", parent: func(t *testing.T) closer {
			cq, err := e.c.CreateCQ(uverbs.CQAttr{CQE: 8})
			if err != nil {
				t.Fatal(err)
			}
			return cq
		}, create: func(p closer) (closer, error) { return qpIn(e.pd, p.(*uverbs.CQ), shared, nil) }},
		{name: "qp in pd", parent: newPD, create: func(p closer) (closer, error) { return qpIn(p.(*uverbs.PD), shared, shared, nil) }},
		{name: "qp with srq", parent: func(t *testing.T) closer {
			srq, err := e.pd.CreateSRQ(uverbs.SRQAttr{MaxWR: 2, MaxSGE: 1})
			if err != nil {
				t.Fatal(err)
			}
			return srq
		}, create: func(p closer) (closer, error) { return qpIn(e.pd, shared, shared, p.(*uverbs.SRQ)) }},
		{name: "srq in pd", parent: newPD, create: func(p closer) (closer, error) {
			return p.(*uverbs.PD).CreateSRQ(uverbs.SRQAttr{MaxWR: 2, MaxSGE: 1})
		}},
		{name: "mr in pd", parent: newPD, create: func(p closer) (closer, error) {
			return p.(*uverbs.PD).RegMR(e.buf.Bytes()[:4096], uverbs.AccessLocalWrite)
		}},
		{name: "mw in pd", parent: newPD, create: func(p closer) (closer, error) { return p.(*uverbs.PD).AllocMW(uverbs.MWType1) }},
		{name: "ah in pd", parent: newPD, create: func(p closer) (closer, error) { return p.(*uverbs.PD).CreateAH(ahAttr) }},
		{name: "cq on channel", bothOK: true, parent: func(t *testing.T) closer {
			ch, err := e.c.CreateCompChannel()
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}, create: func(p closer) (closer, error) {
			return e.c.CreateCQ(uverbs.CQAttr{CQE: 4, CompChannel: p.(*uverbs.CompChannel)})
		}},
	}
	for _, r := range races {
		t.Run(r.name, func(t *testing.T) {
			wins := [2]int{}
			for round := range 60 {
				p := r.parent(t)
				var child closer
				errs := together(func() error {
					var err error
					child, err = r.create(p)
					return err
				}, p.Close)
				cerr, perr := errs[0], errs[1]
				switch {
				case cerr != nil && !errors.Is(cerr, os.ErrClosed):
					t.Fatalf("round %d: creation: %v, want success or os.ErrClosed", round, cerr)
				case perr != nil && !errors.Is(perr, unix.EBUSY):
					t.Fatalf("round %d: close: %v, want success or EBUSY", round, perr)
				case cerr != nil && perr != nil:
					t.Fatalf("round %d: both failed: %v; %v", round, cerr, perr)
				case !r.bothOK && cerr == nil && perr == nil:
					t.Fatalf("round %d: the parent closed under the object made in it", round)
				}
				if cerr == nil {
					wins[0]++
					if err := child.Close(); err != nil {
						t.Fatalf("round %d: close the object made: %v", round, err)
					}
				} else {
					wins[1]++
				}
				if err := p.Close(); err != nil {
					t.Fatalf("round %d: close the parent at last: %v", round, err)
				}
			}
			t.Logf("creation first %d times, Close first %d times", wins[0], wins[1])
		})
	}
	t.Run("crossed cqs", func(t *testing.T) {
		for round := range 40 {
			var cqs [2]*uverbs.CQ
			for i := range cqs {
				var err error
				if cqs[i], err = e.c.CreateCQ(uverbs.CQAttr{CQE: 8}); err != nil {
					t.Fatal(err)
				}
			}
			var qps [2]closer
			done := make(chan []error, 1)
			go func() {
				done <- together(
					func() (err error) { qps[0], err = qpIn(e.pd, cqs[0], cqs[1], nil); return err },
					func() (err error) { qps[1], err = qpIn(e.pd, cqs[1], cqs[0], nil); return err },
					cqs[0].Close, cqs[1].Close)
			}()
			var errs []error
			select {
			case errs = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("round %d: creations and closes of crossed CQs deadlocked", round)
			}
			for i, err := range errs {
				if err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, unix.EBUSY) {
					t.Fatalf("round %d: call %d: %v", round, i, err)
				}
			}
			for i, qp := range qps {
				if errs[i] == nil {
					if err := qp.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, cq := range cqs {
				if err := cq.Close(); err != nil {
					t.Fatalf("round %d: close a cq at last: %v", round, err)
				}
			}
		}
	})
}
