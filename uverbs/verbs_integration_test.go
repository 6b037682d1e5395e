package uverbs_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationQPQuery: Query reports what Init and Connect set.
func TestIntegrationQPQuery(t *testing.T) {
	e := newEnv(t)
	a, b, _, _ := e.pair(t, qpOpts{})
	attr, err := a.Query(uverbs.QPAttrState | uverbs.QPAttrDestQPN | uverbs.QPAttrPathMTU | uverbs.QPAttrAV | uverbs.QPAttrCap)
	if err != nil {
		t.Fatal(err)
	}
	if attr.State != ib.QPStateRTS || attr.DestQPN != b.Num() || attr.PathMTU != ib.MTU1024 || attr.Port != 1 ||
		!attr.AH.IsGlobal || attr.AH.DGID != e.sgid.GID || attr.Timeout != 14 || attr.MinRNRTimer != 1 ||
		attr.Cap.MaxSendWR < 16 || attr.AccessFlags&uverbs.AccessRemoteWrite == 0 {
		t.Fatalf("query of a connected QP: %+v", attr)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Query(uverbs.QPAttrState); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("query of a closed QP: %v", err)
	}
	if err := b.Connect(uverbs.ConnectOptions{Timeout: 40}, uverbs.Peer{}); err == nil {
		t.Fatal("Connect accepted an ACK timeout of 40")
	}
}

// TestIntegrationFindGID: the GID of an address and of a network device
// are the entries the kernel lists for them.
func TestIntegrationFindGID(t *testing.T) {
	e := newEnv(t)
	table, err := e.c.QueryGIDTable()
	if err != nil {
		t.Fatal(err)
	}
	var v4 *uverbs.GIDEntry
	for i, g := range table {
		if g.Type == ib.GIDTypeRoCEv2 && g.GID.Addr().Unmap().Is4() {
			v4 = &table[i]
			break
		}
	}
	if v4 == nil {
		t.Fatalf("no IPv4 RoCE v2 GID in %v", table)
	}
	got, err := e.c.FindGID(1, v4.GID.Addr().Unmap())
	if err != nil || got != *v4 {
		t.Fatalf("FindGID(%v) = %+v, %v; want %+v", v4.GID.Addr().Unmap(), got, err, *v4)
	}
	if got, err := e.c.FindGIDOfType(1, e.sgid.GID.Addr(), ib.GIDTypeRoCEv2); err != nil || got != e.sgid {
		t.Fatalf("FindGID(link-local) = %+v, %v", got, err)
	}
	if _, err := e.c.FindGIDOfType(1, e.sgid.GID.Addr(), ib.GIDTypeIB); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("FindGIDOfType(link-local, IB) on a RoCE port: %v", err)
	}
	if _, err := e.c.FindGID(1, netip.MustParseAddr("192.0.2.99")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("FindGID of an address nobody has: %v", err)
	}
	ifi, err := net.InterfaceByIndex(int(v4.NetdevIndex))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.c.FindNetdevGID(1, ifi.Name); err != nil || got != *v4 {
		t.Fatalf("FindNetdevGID(%s) = %+v, %v; want the IPv4 entry %+v", ifi.Name, got, err, *v4)
	}
	if _, err := e.c.FindNetdevGID(1, "nosuchdev0"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("FindNetdevGID of a missing netdev: %v", err)
	}
}

// TestIntegrationDrain: Drain flushes every receive and send still
// posted, hands each completion over once, and leaves the QP in ERR.
func TestIntegrationDrain(t *testing.T) {
	e := newEnv(t)
	for _, typ := range []ib.QPType{ib.QPTypeRC, ib.QPTypeUD} {
		t.Run(typ.String(), func(t *testing.T) {
			o := qpOpts{typ: typ}
			q := e.newCQ(t, 64)
			qp := e.newQP(t, q, q, o)
			e.connect(t, qp, qp.Num(), o)
			for i := range 5 {
				if err := qp.PostRecv(&uverbs.RecvWR{ID: uint64(100 + i), SGE: []uverbs.SGE{e.sge(4096, 64)}}); err != nil {
					t.Fatal(err)
				}
			}
			got := map[uint64]uverbs.WCStatus{}
			if err := qp.Drain(within(t, 10*time.Second), func(w uverbs.WC) { got[w.ID] = w.Status }); err != nil {
				t.Fatal(err)
			}
			if len(got) != 5 {
				t.Fatalf("drain handed over %v, want the 5 receives", got)
			}
			for id, st := range got {
				if id < 100 || id > 104 || st != uverbs.WCWRFlushErr {
					t.Fatalf("completion %d: %v", id, st)
				}
			}
			if a, err := qp.Query(uverbs.QPAttrState); err != nil || a.State != ib.QPStateErr {
				t.Fatalf("after drain: %+v, %v", a, err)
			}
			if n, _ := q.Poll(make([]uverbs.WC, 4)); n != 0 {
				t.Fatalf("%d completions left after drain", n)
			}
		})
	}
	t.Run("SRQ", func(t *testing.T) {
		srq, err := e.pd.CreateSRQ(uverbs.SRQAttr{MaxWR: 8, MaxSGE: 1})
		if err != nil {
			t.Fatal(err)
		}
		q := e.newCQ(t, 16)
		qp := e.newQP(t, q, q, qpOpts{srq: srq})
		t.Cleanup(func() { qp.Close(); srq.Close() })
		e.connect(t, qp, qp.Num(), qpOpts{})
		if err := qp.Drain(within(t, 10*time.Second), nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		q := e.newCQ(t, 16)
		qp := e.newQP(t, q, q, qpOpts{})
		if err := qp.Drain(within(t, time.Second), nil); err != nil {
			t.Fatalf("drain of a QP in RESET: %v", err)
		}
		if a, err := qp.Query(uverbs.QPAttrState); err != nil || a.State != ib.QPStateReset {
			t.Fatalf("after draining a QP in RESET: %+v, %v", a, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		q := e.newCQ(t, 16)
		qp := e.newQP(t, q, q, qpOpts{})
		e.connect(t, qp, qp.Num(), qpOpts{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// The markers may already be flushed by the first poll.
		if err := qp.Drain(ctx, nil); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("drain with a cancelled context: %v", err)
		}
	})
}

// TestIntegrationMemoryWindows binds type 1 and type 2 windows over part
// of a region, writes through them from the peer, and checks that what
// the window does not cover, an unbound window and an invalidated one
// are refused.
func TestIntegrationMemoryWindows(t *testing.T) {
	e := newEnvAccess(t, uverbs.AccessLocalWrite|uverbs.AccessRemoteWrite|uverbs.AccessRemoteRead|uverbs.AccessMWBind)
	a, b, ca, cb := e.pair(t, qpOpts{})
	mem := e.buf.Bytes()
	const win, winLen = 64 << 10, 4096
	write := func(id uint64, rkey uint32, off int) uverbs.WC {
		t.Helper()
		fill(mem[:256], byte(id))
		if err := a.PostSend(&uverbs.SendWR{ID: id, Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{e.sge(0, 256)}, RemoteAddr: e.buf.Addr(off), RKey: rkey}); err != nil {
			t.Fatal(err)
		}
		return ca.wait(t, 1)[0]
	}
	bind := uverbs.MWBind{LKey: e.mr.LKey(), Addr: e.buf.Addr(win), Length: winLen, Access: uverbs.AccessRemoteWrite}

	t.Run("type1", func(t *testing.T) {
		mw, err := e.pd.AllocMW(uverbs.MWType1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mw.Close() })
		old := mw.RKey()
		rkey, err := b.BindMW(mw, bind, 1, uverbs.SendSignaled)
		if err != nil {
			t.Fatal(err)
		}
		if rkey == old || rkey != mw.RKey() || rkey>>8 != old>>8 {
			t.Fatalf("bind gave key %#x (window's %#x, before %#x)", rkey, mw.RKey(), old)
		}
		checkWC(t, cb.wait(t, 1)[0], 1, uverbs.WCBindMW, uverbs.WCSuccess)
		checkWC(t, write(2, rkey, win+128), 2, uverbs.WCRDMAWrite, uverbs.WCSuccess)
		if !bytes.Equal(mem[win+128:win+384], mem[:256]) {
			t.Fatal("the write through the window did not land")
		}
		if _, err := b.BindMW(mw, uverbs.MWBind{LKey: e.mr.LKey()}, 3, uverbs.SendSignaled); err != nil {
			t.Fatal(err)
		}
		checkWC(t, cb.wait(t, 1)[0], 3, uverbs.WCBindMW, uverbs.WCSuccess)
		if wc := write(4, rkey, win+128); wc.Status != uverbs.WCRemAccessErr {
			t.Fatalf("write through an unbound type 1 window: %v", wc.Status)
		}
	})

	a, b, ca, cb = e.pair(t, qpOpts{})
	t.Run("type2", func(t *testing.T) {
		mw, err := e.pd.AllocMW(uverbs.MWType2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mw.Close() })
		rkey := mw.NextRKey()
		if err := b.PostSend(&uverbs.SendWR{ID: 5, Opcode: uverbs.OpBindMW, Flags: uverbs.SendSignaled, MW: mw, MWRKey: rkey, MWBind: bind}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, cb.wait(t, 1)[0], 5, uverbs.WCBindMW, uverbs.WCSuccess)
		if mw.RKey() != rkey {
			t.Fatalf("window key %#x after bind, want %#x", mw.RKey(), rkey)
		}
		checkWC(t, write(6, rkey, win), 6, uverbs.WCRDMAWrite, uverbs.WCSuccess)
		if !bytes.Equal(mem[win:win+256], mem[:256]) {
			t.Fatal("the write through the window did not land")
		}
		// rxe checks a window's address range against its MR only (Linux
		// 6.1 and 6.12: a write past the window's end but inside the MR
		// succeeds), so what is tested is the window's access: it
		// grants no remote read.
		if err := a.PostSend(&uverbs.SendWR{ID: 7, Opcode: uverbs.OpRDMARead, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{e.sge(0, 64)}, RemoteAddr: e.buf.Addr(win), RKey: rkey}); err != nil {
			t.Fatal(err)
		}
		if wc := ca.wait(t, 1)[0]; wc.Status != uverbs.WCRemAccessErr {
			t.Fatalf("read through a write-only window: %v", wc.Status)
		}
	})

	a, b, ca, cb = e.pair(t, qpOpts{})
	t.Run("invalidate", func(t *testing.T) {
		mw, err := e.pd.AllocMW(uverbs.MWType2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mw.Close() })
		bindTo := func(id uint64) uint32 {
			t.Helper()
			rkey := mw.NextRKey()
			if err := b.PostSend(&uverbs.SendWR{ID: id, Opcode: uverbs.OpBindMW, Flags: uverbs.SendSignaled, MW: mw, MWRKey: rkey, MWBind: bind}); err != nil {
				t.Fatal(err)
			}
			checkWC(t, cb.wait(t, 1)[0], id, uverbs.WCBindMW, uverbs.WCSuccess)
			return rkey
		}
		rkey := bindTo(8)
		if err := b.PostSend(&uverbs.SendWR{ID: 9, Opcode: uverbs.OpLocalInv, Flags: uverbs.SendSignaled, InvalidateRKey: rkey}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, cb.wait(t, 1)[0], 9, uverbs.WCLocalInv, uverbs.WCSuccess)

		// Bound again, then invalidated by the peer's SEND_WITH_INV.
		rkey = bindTo(10)
		if err := b.PostRecv(&uverbs.RecvWR{ID: 11, SGE: []uverbs.SGE{e.sge(8192, 64)}}); err != nil {
			t.Fatal(err)
		}
		if err := a.PostSend(&uverbs.SendWR{ID: 12, Opcode: uverbs.OpSendWithInv, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{e.sge(0, 64)}, InvalidateRKey: rkey}); err != nil {
			t.Fatal(err)
		}
		checkWC(t, ca.wait(t, 1)[0], 12, uverbs.WCSend, uverbs.WCSuccess)
		wc := cb.wait(t, 1)[0]
		checkWC(t, wc, 11, uverbs.WCRecv, uverbs.WCSuccess)
		if wc.Flags&uverbs.WCWithInv == 0 || wc.InvRKey != rkey {
			t.Fatalf("receive of a SEND_WITH_INV: %+v", wc)
		}
		if wc := write(13, rkey, win); wc.Status != uverbs.WCRemAccessErr {
			t.Fatalf("write through an invalidated window: %v", wc.Status)
		}
	})

	t.Run("errors", func(t *testing.T) {
		if _, err := e.pd.AllocMW(3); err == nil {
			t.Fatal("AllocMW accepted type 3")
		}
		mw, err := e.pd.AllocMW(uverbs.MWType2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.BindMW(mw, bind, 1, 0); err == nil {
			t.Fatal("BindMW accepted a type 2 window")
		}
		if err := a.PostSend(&uverbs.SendWR{Opcode: uverbs.OpBindMW}); err == nil {
			t.Fatal("a bind without a window was posted")
		}
		if err := mw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := mw.Close(); err != nil {
			t.Fatalf("second close: %v", err)
		}
	})
}
