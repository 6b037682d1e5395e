package uverbs_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}

// TestIntegrationRxeSendRecv sends between two RC QPs of rxe0: sizes
// from 1 byte to 64 KiB, inline, several SGEs, immediate data, and
// unsignaled sends, checking every byte.
func TestIntegrationRxeSendRecv(t *testing.T) {
	e := newEnv(t)
	a, b, ca, cb := e.pair(t, qpOpts{sge: 3, inline: 64})
	mem := e.buf.Bytes()
	const src, dst = 0, 512 << 10
	for i, n := range []int{1, 63, 64, 1000, 4096, 65536} {
		fill(mem[src:src+n], byte(i))
		clear(mem[dst : dst+n+1])
		if err := b.PostRecv(&uverbs.RecvWR{ID: 100, SGE: []uverbs.SGE{e.sge(dst, n+1)}}); err != nil {
			t.Fatal(err)
		}
		flags := uverbs.SendSignaled
		if n <= a.MaxInline() {
			flags |= uverbs.SendInline
		}
		if err := a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpSendWithImm, Imm: uint32(n), Flags: flags, SGE: []uverbs.SGE{e.sge(src, n)}}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, ca.wait(t, 1)[0], 1, uverbs.WCSend, uverbs.WCSuccess)
		wc := cb.wait(t, 1)[0]
		checkWC(t, wc, 100, uverbs.WCRecv, uverbs.WCSuccess)
		if wc.ByteLen != uint32(n) || wc.Flags&uverbs.WCWithImm == 0 || wc.Imm != uint32(n) || wc.QPNum != b.Num() {
			t.Fatalf("size %d: recv completion %+v", n, wc)
		}
		if !bytes.Equal(mem[dst:dst+n], mem[src:src+n]) || mem[dst+n] != 0 {
			t.Fatalf("size %d (inline %v): data differs", n, flags&uverbs.SendInline != 0)
		}
	}
	// Inline bytes from the Go heap, reused for the next send as soon
	// as PostSend returns.
	heap := make([]byte, a.MaxInline())
	for _, n := range []int{1, 32, a.MaxInline()} {
		fill(heap[:n], byte(n))
		want := append([]byte(nil), heap[:n]...)
		clear(mem[dst : dst+n+1])
		if err := b.PostRecv(&uverbs.RecvWR{ID: 102, SGE: []uverbs.SGE{e.sge(dst, n+1)}}); err != nil {
			t.Fatal(err)
		}
		if err := a.PostSend(&uverbs.SendWR{ID: 3, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, Inline: heap[:n]}); err != nil {
			t.Fatal(err)
		}
		clear(heap)
		checkWC(t, ca.wait(t, 1)[0], 3, uverbs.WCSend, uverbs.WCSuccess)
		if wc := cb.wait(t, 1)[0]; wc.ByteLen != uint32(n) || !bytes.Equal(mem[dst:dst+n], want) || mem[dst+n] != 0 {
			t.Fatalf("%d inline bytes: %+v, data equal %v", n, wc, bytes.Equal(mem[dst:dst+n], want))
		}
	}
	// Three SGEs gathered into one receive that scatters into two.
	fill(mem[src:src+300], 9)
	clear(mem[dst : dst+300])
	if err := b.PostRecv(&uverbs.RecvWR{ID: 101, SGE: []uverbs.SGE{e.sge(dst, 100), e.sge(dst+100, 200)}}); err != nil {
		t.Fatal(err)
	}
	if err := a.PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{e.sge(src, 50), e.sge(src+50, 150), e.sge(src+200, 100)}}); err != nil {
		t.Fatal(err)
	}
	checkWC(t, ca.wait(t, 1)[0], 2, uverbs.WCSend, uverbs.WCSuccess)
	if wc := cb.wait(t, 1)[0]; wc.ByteLen != 300 || !bytes.Equal(mem[dst:dst+300], mem[src:src+300]) {
		t.Fatalf("multi-SGE: %+v, data equal %v", wc, bytes.Equal(mem[dst:dst+300], mem[src:src+300]))
	}
	// Unsignaled sends complete silently; the signaled one after them
	// reports alone.
	wrs := make([]uverbs.SendWR, 4)
	for i := range wrs {
		if err := b.PostRecv(&uverbs.RecvWR{ID: uint64(200 + i), SGE: []uverbs.SGE{e.sge(dst+i*64, 64)}}); err != nil {
			t.Fatal(err)
		}
		wrs[i] = uverbs.SendWR{ID: uint64(10 + i), Opcode: uverbs.OpSend, SGE: []uverbs.SGE{e.sge(src+i*64, 64)}}
	}
	wrs[3].Flags = uverbs.SendSignaled
	if err := a.PostSendList(wrs); err != nil {
		t.Fatal(err)
	}
	checkWC(t, ca.wait(t, 1)[0], 13, uverbs.WCSend, uverbs.WCSuccess)
	for i, wc := range cb.wait(t, 4) {
		checkWC(t, wc, uint64(200+i), uverbs.WCRecv, uverbs.WCSuccess)
	}
	ca.none(t, 50*time.Millisecond)
}

// TestIntegrationRxeRDMAAtomic checks RDMA write (with and without
// immediate), RDMA read, compare-and-swap and fetch-and-add on the data.
func TestIntegrationRxeRDMAAtomic(t *testing.T) {
	e := newEnv(t)
	a, b, ca, cb := e.pair(t, qpOpts{})
	mem := e.buf.Bytes()
	rkey := e.mr.RKey()
	fill(mem[0:8192], 3)
	clear(mem[256<<10 : 256<<10+8192])
	if err := a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 8192)},
		RemoteAddr: e.buf.Addr(256 << 10), RKey: rkey}); err != nil {
		t.Fatal(err)
	}
	checkWC(t, ca.wait(t, 1)[0], 1, uverbs.WCRDMAWrite, uverbs.WCSuccess)
	if !bytes.Equal(mem[0:8192], mem[256<<10:256<<10+8192]) {
		t.Fatal("RDMA write: data differs")
	}
	// Write with immediate consumes a receive and reports the immediate.
	if err := b.PostRecv(&uverbs.RecvWR{ID: 7}); err != nil {
		t.Fatal(err)
	}
	if err := a.PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpRDMAWriteWithImm, Imm: 0xdeadbeef, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{e.sge(0, 100)}, RemoteAddr: e.buf.Addr(300 << 10), RKey: rkey}); err != nil {
		t.Fatal(err)
	}
	checkWC(t, ca.wait(t, 1)[0], 2, uverbs.WCRDMAWrite, uverbs.WCSuccess)
	wc := cb.wait(t, 1)[0]
	checkWC(t, wc, 7, uverbs.WCRecvRDMAWithImm, uverbs.WCSuccess)
	if wc.Imm != 0xdeadbeef || wc.ByteLen != 100 || !bytes.Equal(mem[300<<10:300<<10+100], mem[:100]) {
		t.Fatalf("write with imm: %+v", wc)
	}
	// RDMA read back into a third place.
	clear(mem[400<<10 : 400<<10+8192])
	if err := a.PostSend(&uverbs.SendWR{ID: 3, Opcode: uverbs.OpRDMARead, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(400<<10, 8192)},
		RemoteAddr: e.buf.Addr(256 << 10), RKey: rkey}); err != nil {
		t.Fatal(err)
	}
	checkWC(t, ca.wait(t, 1)[0], 3, uverbs.WCRDMARead, uverbs.WCSuccess)
	if !bytes.Equal(mem[400<<10:400<<10+8192], mem[0:8192]) {
		t.Fatal("RDMA read: data differs")
	}
	// Atomics on a remote 64-bit word; the old value lands locally.
	const word, old = 500 << 10, 504 << 10
	binary.LittleEndian.PutUint64(mem[word:], 40)
	for _, tc := range []struct {
		op             uverbs.Opcode
		cmpAdd, swap   uint64
		wantOld, after uint64
		wcop           uverbs.WCOpcode
	}{
		{uverbs.OpAtomicFetchAdd, 2, 0, 40, 42, uverbs.WCFetchAdd},
		{uverbs.OpAtomicCmpAndSwp, 42, 7, 42, 7, uverbs.WCCompSwap},
		{uverbs.OpAtomicCmpAndSwp, 42, 9, 7, 7, uverbs.WCCompSwap}, // compare fails
	} {
		if err := a.PostSend(&uverbs.SendWR{ID: 4, Opcode: tc.op, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(old, 8)},
			RemoteAddr: e.buf.Addr(word), RKey: rkey, CompareAdd: tc.cmpAdd, Swap: tc.swap}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, ca.wait(t, 1)[0], 4, tc.wcop, uverbs.WCSuccess)
		if got, now := binary.LittleEndian.Uint64(mem[old:]), binary.LittleEndian.Uint64(mem[word:]); got != tc.wantOld || now != tc.after {
			t.Fatalf("%v(%d, %d): old %d now %d, want %d and %d", tc.op, tc.cmpAdd, tc.swap, got, now, tc.wantOld, tc.after)
		}
	}
	// Misaligned atomics and over-long inline data are refused before
	// anything is posted.
	if err := a.PostSend(&uverbs.SendWR{Opcode: uverbs.OpAtomicFetchAdd, SGE: []uverbs.SGE{e.sge(old, 8)}, RemoteAddr: e.buf.Addr(word + 4), RKey: rkey}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("misaligned atomic: %v", err)
	}
	if err := a.PostSend(&uverbs.SendWR{Opcode: uverbs.OpSend, Flags: uverbs.SendInline, SGE: []uverbs.SGE{e.sge(0, a.MaxInline()+1)}}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("inline beyond %d: %v", a.MaxInline(), err)
	}
	ca.none(t, 20*time.Millisecond)
}

// TestIntegrationRxeSRQ receives through a shared receive queue.
func TestIntegrationRxeSRQ(t *testing.T) {
	e := newEnv(t)
	srq, err := e.pd.CreateSRQ(uverbs.SRQAttr{MaxWR: 16, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := e.newCQ(t, 64), e.newCQ(t, 64)
	a := e.newQP(t, ca, ca, qpOpts{})
	b := e.newQP(t, cb, cb, qpOpts{srq: srq})
	t.Cleanup(func() { b.Close(); srq.Close() })
	e.connect(t, a, b.Num(), qpOpts{})
	e.connect(t, b, a.Num(), qpOpts{})
	if err := b.PostRecv(&uverbs.RecvWR{}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("PostRecv on a uverbs.QP with an SRQ: %v", err)
	}
	mem := e.buf.Bytes()
	for i := range 3 {
		if err := srq.PostRecv(&uverbs.RecvWR{ID: uint64(50 + i), SGE: []uverbs.SGE{e.sge(8192+i*1024, 1024)}}); err != nil {
			t.Fatal(err)
		}
	}
	fill(mem[:3000], 5)
	for i := range 3 {
		if err := a.PostSend(&uverbs.SendWR{ID: uint64(i), Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(i*1000, 1000)}}); err != nil {
			t.Fatal(err)
		}
	}
	ca.wait(t, 3)
	for i, wc := range cb.wait(t, 3) {
		checkWC(t, wc, uint64(50+i), uverbs.WCRecv, uverbs.WCSuccess)
		if wc.ByteLen != 1000 || !bytes.Equal(mem[8192+i*1024:8192+i*1024+1000], mem[i*1000:i*1000+1000]) {
			t.Fatalf("srq receive %d: %+v", i, wc)
		}
	}
}

// TestIntegrationRxeErrors: a bad lkey, a bad rkey, a QP in the error
// state, a CQ overrun and a peer that goes away all surface as error
// completions or events, within bounded waits.
func TestIntegrationRxeErrors(t *testing.T) {
	e := newEnv(t)
	t.Run("lkey", func(t *testing.T) {
		a, b, ca, _ := e.pair(t, qpOpts{})
		_ = b
		if err := a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{{Addr: e.buf.Addr(0), Length: 64, LKey: e.mr.LKey() ^ 0x5500}}, RemoteAddr: e.buf.Addr(4096), RKey: e.mr.RKey()}); err != nil {
			t.Fatal(err)
		}
		wc := ca.wait(t, 1)[0]
		if wc.ID != 1 || wc.Status == uverbs.WCSuccess {
			t.Fatalf("bad lkey: %+v (%v)", wc, wc.Status)
		}
		t.Logf("bad lkey: %v", wc.Status)
		// The QP is now in the error state: what follows is flushed.
		if err := a.PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 8)}}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, ca.wait(t, 1)[0], 2, uverbs.WCSend, uverbs.WCWRFlushErr)
	})
	t.Run("rkey", func(t *testing.T) {
		a, _, ca, _ := e.pair(t, qpOpts{})
		if err := a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 64)},
			RemoteAddr: e.buf.Addr(4096), RKey: e.mr.RKey() ^ 0x5500}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, ca.wait(t, 1)[0], 1, uverbs.WCRDMAWrite, uverbs.WCRemAccessErr)
	})
	t.Run("qp-error", func(t *testing.T) {
		a, _, ca, _ := e.pair(t, qpOpts{})
		if err := a.PostRecv(&uverbs.RecvWR{ID: 9, SGE: []uverbs.SGE{e.sge(0, 64)}}); err != nil {
			t.Fatal(err)
		}
		if err := a.Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState); err != nil {
			t.Fatal(err)
		}
		checkWC(t, ca.wait(t, 1)[0], 9, uverbs.WCRecv, uverbs.WCWRFlushErr)
		if err := a.PostSend(&uverbs.SendWR{ID: 3, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 8)}}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, ca.wait(t, 1)[0], 3, uverbs.WCSend, uverbs.WCWRFlushErr)
	})
	t.Run("cq-overrun", func(t *testing.T) {
		small := e.newCQ(t, 1)
		big := e.newCQ(t, 64)
		a := e.newQP(t, small, small, qpOpts{})
		b := e.newQP(t, big, big, qpOpts{})
		e.connect(t, a, b.Num(), qpOpts{})
		e.connect(t, b, a.Num(), qpOpts{})
		n := small.CQ.CQE() + 2
		for i := range n {
			if err := b.PostRecv(&uverbs.RecvWR{ID: uint64(i), SGE: []uverbs.SGE{e.sge(0, 8)}}); err != nil {
				t.Fatal(err)
			}
			if err := a.PostSend(&uverbs.SendWR{ID: uint64(i), Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 8)}}); err != nil {
				t.Fatal(err)
			}
		}
		for {
			ev, err := e.c.GetEvent(within(t, 3*time.Second))
			if err != nil {
				t.Fatalf("no CQ_ERR event after %d sends into a uverbs.CQ of %d: %v", n, n-2, err)
			}
			if ev.Type == uverbs.EventCQErr {
				if ev.CQ != small.CQ {
					t.Fatalf("CQ_ERR for %p, want %p", ev.CQ, small.CQ)
				}
				break
			}
			t.Logf("event %v", ev.Type)
		}
	})
	t.Run("peer-gone", func(t *testing.T) {
		o := qpOpts{timeout: 8, retry: 1} // 1 ms timeouts, one retry
		ca, cb := e.newCQ(t, 16), e.newCQ(t, 16)
		a, b := e.newQP(t, ca, ca, o), e.newQP(t, cb, cb, o)
		e.connect(t, a, b.Num(), o)
		e.connect(t, b, a.Num(), o)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := a.PostSend(&uverbs.SendWR{ID: 5, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 8)}}); err != nil {
			t.Fatal(err)
		}
		wc := ca.wait(t, 1)[0]
		if wc.ID != 5 || wc.Status == uverbs.WCSuccess {
			t.Fatalf("send to a destroyed QP: %+v (%v)", wc, wc.Status)
		}
		t.Logf("send to a destroyed QP: %v after %v", wc.Status, time.Since(start))
		if err := b.PostSend(&uverbs.SendWR{Opcode: uverbs.OpSend}); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("post on a closed QP: %v", err)
		}
	})
}

// TestIntegrationRxeNoAllocs checks that posting (with its doorbell),
// arming, waiting for the event and polling allocate nothing, with the
// work requests and their SGEs built on the stack at each post, as
// programs do.
func TestIntegrationRxeNoAllocs(t *testing.T) {
	e := newEnv(t)
	a, b, ca, cb := e.pair(t, qpOpts{send: 128, recv: 128})
	src, dst := e.sge(0, 32), e.sge(4096, 32)
	var wc [4]uverbs.WC
	ctx := context.Background()
	const runs = 50
	allocs := testing.AllocsPerRun(runs, func() {
		rsge := [1]uverbs.SGE{dst}
		if err := b.PostRecv(&uverbs.RecvWR{ID: 2, SGE: rsge[:]}); err != nil {
			t.Fatal(err)
		}
		if err := cb.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		ssge := [1]uverbs.SGE{src}
		if err := a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: ssge[:]}); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < 1; {
			n, err := cb.Poll(wc[:1])
			if err != nil {
				t.Fatal(err)
			}
			if got += n; got == 0 {
				if _, err := cb.ch.GetEvent(ctx); err != nil {
					t.Fatal(err)
				}
				cb.AckEvents(1)
				if err := cb.RequestNotify(false); err != nil {
					t.Fatal(err)
				}
			}
		}
		ca.Poll(wc[:])
	})
	if allocs != 0 {
		t.Fatalf("post, wait and poll: %v allocations per run", allocs)
	}
}

// TestIntegrationRxeClosedContext: doorbells after the context closed
// fail with os.ErrClosed instead of writing to a stale fd.
func TestIntegrationRxeClosedContext(t *testing.T) {
	e := newEnv(t)
	q := e.newCQ(t, 4)
	e.c.Close()
	if err := q.RequestNotify(false); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("notify after the context closed: %v", err)
	}
}

// TestIntegrationRxeResizeCQ grows a CQ that holds unpolled completions:
// they move to the new queue, which then takes more.
func TestIntegrationRxeResizeCQ(t *testing.T) {
	e := newEnv(t)
	a, b, ca, cb := e.pair(t, qpOpts{})
	_ = cb
	send := func(id uint64) {
		t.Helper()
		if err := b.PostRecv(&uverbs.RecvWR{ID: id, SGE: []uverbs.SGE{e.sge(8192, 64)}}); err != nil {
			t.Fatal(err)
		}
		if err := a.PostSend(&uverbs.SendWR{ID: id, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 64)}}); err != nil {
			t.Fatal(err)
		}
	}
	send(1)
	send(2)
	checkWC(t, ca.wait(t, 1)[0], 1, uverbs.WCSend, uverbs.WCSuccess)
	// Completion 2 may still be in flight: wait for it without polling.
	time.Sleep(50 * time.Millisecond)
	before := ca.CQ.CQE()
	if err := ca.Resize(before * 4); err != nil {
		t.Fatal(err)
	}
	if ca.CQ.CQE() < before*4 {
		t.Fatalf("cqe %d after resizing %d to %d", ca.CQ.CQE(), before, before*4)
	}
	for i := uint64(3); i < 6; i++ {
		send(i)
	}
	for i, wc := range ca.wait(t, 4) {
		checkWC(t, wc, uint64(i+2), uverbs.WCSend, uverbs.WCSuccess)
	}
}

// TestIntegrationRxeUC sends and writes over UC QPs; reads and atomics
// are refused before anything is posted.
func TestIntegrationRxeUC(t *testing.T) {
	e := newEnv(t)
	a, b, ca, cb := e.pair(t, qpOpts{typ: ib.QPTypeUC})
	mem := e.buf.Bytes()
	fill(mem[:2000], 11)
	clear(mem[64<<10 : 64<<10+4000])
	if err := b.PostRecv(&uverbs.RecvWR{ID: 1, SGE: []uverbs.SGE{e.sge(64<<10, 2000)}}); err != nil {
		t.Fatal(err)
	}
	if err := a.PostSend(&uverbs.SendWR{ID: 1, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 2000)}}); err != nil {
		t.Fatal(err)
	}
	if err := a.PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(0, 2000)},
		RemoteAddr: e.buf.Addr(66 << 10), RKey: e.mr.RKey()}); err != nil {
		t.Fatal(err)
	}
	ca.wait(t, 2)
	checkWC(t, cb.wait(t, 1)[0], 1, uverbs.WCRecv, uverbs.WCSuccess)
	// UC has no acknowledgement: the write lands some time after its
	// completion.
	for end := time.Now().Add(2 * time.Second); !bytes.Equal(mem[66<<10:66<<10+2000], mem[:2000]); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("UC write: data differs after 2 s")
		}
	}
	if !bytes.Equal(mem[64<<10:64<<10+2000], mem[:2000]) {
		t.Fatal("UC send: data differs")
	}
	if err := a.PostSend(&uverbs.SendWR{Opcode: uverbs.OpRDMARead, SGE: []uverbs.SGE{e.sge(0, 8)}, RemoteAddr: e.buf.Addr(0), RKey: e.mr.RKey()}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("RDMA read on UC: %v", err)
	}
}
