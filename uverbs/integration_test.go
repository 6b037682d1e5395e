package uverbs

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func devicesForTest(t *testing.T) []Device {
	t.Helper()
	testenv.RequireRDMA(t)
	devs := listForTest(t)
	if len(devs) == 0 {
		testenv.Skip(t, "no uverbs devices")
	}
	return devs
}

func openForTest(t *testing.T, d Device, iface Interface) *Context {
	t.Helper()
	c, err := OpenWith(d, iface)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIntegrationUverbsQueries opens every device through both kernel
// interfaces and checks that both report the same attributes.
func TestIntegrationUverbsQueries(t *testing.T) {
	devs := devicesForTest(t)
	// Two devices keep the test to seconds under TCG; ibv_devinfo's
	// differential test covers every device.
	for _, d := range devs[:min(2, len(devs))] {
		if d.DriverID != ib.DriverRXE {
			t.Fatalf("%s: driver %v, want rxe", d.Name, d.DriverID)
		}
		ci := openForTest(t, d, InterfaceAuto)
		cw := openForTest(t, d, InterfaceWrite)
		if !ci.UsesIoctl() || cw.UsesIoctl() || !ci.invokeWrite {
			t.Fatalf("%s: ioctl=%v invokeWrite=%v write-only ioctl=%v", d.Name, ci.UsesIoctl(), ci.invokeWrite, cw.UsesIoctl())
		}
		ai, err := ci.QueryDevice()
		if err != nil {
			t.Fatal(err)
		}
		aw, err := cw.QueryDevice()
		if err != nil {
			t.Fatal(err)
		}
		if guid := netlinkDevice(t, d.Index).NodeGUID; *ai != *aw || ai.NodeGUID != guid || ai.PhysPortCount != 1 || ai.Extended == 0 {
			t.Fatalf("%s: ioctl %+v, write %+v, netlink guid %v", d.Name, ai, aw, guid)
		}
		pi, err := ci.QueryPort(1)
		if err != nil {
			t.Fatal(err)
		}
		pw, err := cw.QueryPort(1)
		if err != nil {
			t.Fatal(err)
		}
		pw.Caps2, pw.ActiveSpeedEx = pi.Caps2, pi.ActiveSpeedEx // write() does not carry them
		if *pi != *pw || pi.LinkLayer != ib.LinkLayerEthernet || pi.GIDTableLen == 0 {
			t.Fatalf("%s port 1: ioctl %+v, write %+v", d.Name, pi, pw)
		}
		gi, err := ci.QueryGIDTable()
		if err != nil {
			t.Fatal(err)
		}
		gw, err := cw.QueryGIDTable() // the sysfs fallback
		if err != nil {
			t.Fatal(err)
		}
		if len(gi) == 0 || len(gi) != len(gw) {
			t.Fatalf("%s: gid table ioctl %v, sysfs %v", d.Name, gi, gw)
		}
		for i := range gi {
			if gi[i] != gw[i] {
				t.Errorf("%s: gid %d: ioctl %+v, sysfs %+v", d.Name, i, gi[i], gw[i])
			}
			e, err := ci.QueryGID(int(gi[i].Port), int(gi[i].Index))
			if err != nil || e != gi[i] {
				t.Errorf("%s: QueryGID = %+v, %v; want %+v", d.Name, e, err, gi[i])
			}
		}
		if _, err := ci.QueryGID(1, int(pi.GIDTableLen)-1); !errors.Is(err, unix.ENODATA) && err != nil {
			t.Errorf("last (empty) gid slot: %v, want ENODATA", err)
		}
		if _, err := ci.QueryPort(0); !errors.Is(err, unix.EINVAL) {
			t.Errorf("QueryPort(0) = %v, want EINVAL", err)
		}
		if _, err := ci.QueryPort(2); !errors.Is(err, unix.EINVAL) {
			t.Errorf("QueryPort(2) = %v, want EINVAL from the kernel", err)
		}
		if pi.PKeyTableLen > 0 {
			pk, err := ci.PKeyTable(1)
			if err != nil || pk[0] != 0xffff {
				t.Errorf("pkey table: %x, %v", pk, err)
			}
		}
		// Both interfaces give an async event fd (write(): GET_CONTEXT's
		// response; ioctl: ASYNC_EVENT_ALLOC).
		for _, c := range []*Context{ci, cw} {
			if _, err := c.GetEvent(until(t, time.Now().Add(10*time.Millisecond))); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("GetEvent (ioctl %v): %v, want a deadline error", c.UsesIoctl(), err)
			}
		}
		if _, _, err := ci.QueryContext(); !errors.Is(err, ErrNotSupported) {
			t.Errorf("QueryContext on rxe = %v, want ErrNotSupported", err)
		}
	}
}

// TestIntegrationUverbsObjects creates, uses, queries and destroys every
// object on both interfaces: a QP taken to RTS, an AH to another device's
// GID.
func TestIntegrationUverbsObjects(t *testing.T) {
	devs := devicesForTest(t)
	for _, iface := range []Interface{InterfaceAuto, InterfaceWrite} {
		c := openForTest(t, devs[0], iface)
		mem, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Munmap(mem) })
		pd, err := c.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		mr, err := pd.RegMR(mem, AccessLocalWrite|AccessRemoteRead|AccessRemoteWrite)
		if err != nil {
			t.Fatal(err)
		}
		if mr.LKey() == 0 || mr.Len() != len(mem) {
			t.Fatalf("mr lkey %#x len %d", mr.LKey(), mr.Len())
		}
		ch, err := c.CreateCompChannel()
		if err != nil {
			t.Fatal(err)
		}
		if cq, ok, err := ch.TryGetEvent(); cq != nil || ok || err != nil {
			t.Fatalf("TryGetEvent on a new channel: %v, %v, %v", cq, ok, err)
		}
		if _, err := ch.GetEvent(until(t, time.Now())); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("GetEvent on a new channel with a passed deadline: %v", err)
		}
		cq, err := c.CreateCQ(CQAttr{CQE: 16, CompChannel: ch})
		if err != nil {
			t.Fatal(err)
		}
		if cq.CQE() < 16 {
			t.Fatalf("cqe %d", cq.CQE())
		}
		srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 8, MaxSGE: 1})
		if err != nil {
			t.Fatal(err)
		}
		if sa, err := srq.Query(); err != nil || sa.MaxWR < 8 {
			t.Fatalf("srq query %+v, %v", sa, err)
		}
		gids, err := c.QueryGIDTable()
		if err != nil {
			t.Fatal(err)
		}
		sgid := linkLocalV2(t, gids)
		for _, typ := range []ib.QPType{ib.QPTypeRC, ib.QPTypeUC, ib.QPTypeUD} {
			qp, err := pd.CreateQP(QPInit{Type: typ, SendCQ: cq, RecvCQ: cq, Cap: QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
			if err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
			toRTS(t, qp, sgid)
			if err := qp.Close(); err != nil {
				t.Fatal(err)
			}
			if err := qp.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if _, err := qp.Query(QPAttrState); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("query of a closed QP: %v", err)
			}
		}
		// An SRQ-attached QP keeps the PD busy.
		qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq, SRQ: srq, Cap: QPCap{MaxSendWR: 4, MaxSendSGE: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if err := pd.Close(); !errors.Is(err, unix.EBUSY) {
			t.Fatalf("closing a PD with a live QP: %v, want EBUSY", err)
		}
		// AH to another device's GID: rxe1 sits on veth0's peer (the
		// harness pairs veth0-veth1, veth2-veth3, ...).
		other := devs[min(1, len(devs)-1)]
		oc := openForTest(t, other, InterfaceAuto)
		ogids, err := oc.QueryGIDTable()
		if err != nil {
			t.Fatal(err)
		}
		// The link-local GID: the veth peers reach each other by
		// neighbour discovery; the IPv4 GIDs are local addresses of the
		// same host, which the kernel's MAC resolution does not reach
		// (ETIMEDOUT, measured on 6.1 and 6.12).
		dgid := linkLocalV2(t, ogids).GID
		ah, err := pd.CreateAH(AHAttr{IsGlobal: true, DGID: dgid, SGIDIndex: uint8(sgid.Index), HopLimit: 64, Port: 1})
		if err != nil {
			t.Fatalf("create AH to %v: %v", dgid, err)
		}
		if _, err := pd.CreateAH(AHAttr{IsGlobal: true, DGID: dgid, SGIDIndex: uint8(sgid.Index), Port: 0}); !errors.Is(err, unix.EINVAL) {
			t.Fatalf("AH on port 0: %v", err)
		}
		for _, cl := range []interface{ Close() error }{ah, qp, srq, cq, ch, mr, pd} {
			if err := cl.Close(); err != nil {
				t.Fatalf("%T.Close: %v", cl, err)
			}
		}
	}
}

func toRTS(t *testing.T, qp *QP, sgid GIDEntry) {
	t.Helper()
	attr := &QPAttr{State: ib.QPStateInit, Port: 1, AccessFlags: AccessRemoteWrite | AccessRemoteRead}
	mask := QPAttrState | QPAttrPKeyIndex | QPAttrPort
	if qp.Type() == ib.QPTypeUD {
		attr.QKey = 0x11111111
		mask |= QPAttrQKey
	} else {
		mask |= QPAttrAccessFlags
	}
	if err := qp.Modify(attr, mask); err != nil {
		t.Fatal(err)
	}
	attr = &QPAttr{State: ib.QPStateRTR}
	mask = QPAttrState
	if qp.Type() != ib.QPTypeUD {
		attr.PathMTU, attr.DestQPN, attr.RQPSN = ib.MTU1024, qp.Num(), 7
		attr.AH = AHAttr{IsGlobal: true, DGID: sgid.GID, SGIDIndex: uint8(sgid.Index), HopLimit: 1, Port: 1}
		mask |= QPAttrAV | QPAttrPathMTU | QPAttrDestQPN | QPAttrRQPSN
		if qp.Type() == ib.QPTypeRC {
			attr.MaxDestRdAtomic, attr.MinRNRTimer = 1, 12
			mask |= QPAttrMaxDestRdAtomic | QPAttrMinRNRTimer
		}
	}
	if err := qp.Modify(attr, mask); err != nil {
		t.Fatal(err)
	}
	attr = &QPAttr{State: ib.QPStateRTS, SQPSN: 9}
	mask = QPAttrState | QPAttrSQPSN
	if qp.Type() == ib.QPTypeRC {
		attr.Timeout, attr.RetryCnt, attr.RNRRetry, attr.MaxRdAtomic = 14, 7, 7, 1
		mask |= QPAttrTimeout | QPAttrRetryCnt | QPAttrRNRRetry | QPAttrMaxQPRdAtomic
	}
	if err := qp.Modify(attr, mask); err != nil {
		t.Fatal(err)
	}
	got, err := qp.Query(QPAttrState | QPAttrSQPSN | QPAttrAV)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != ib.QPStateRTS || got.SQPSN != 9 {
		t.Fatalf("%v QP after RTS: state %v sq_psn %d", qp.Type(), got.State, got.SQPSN)
	}
	if qp.Type() != ib.QPTypeUD && (got.DestQPN != qp.Num() || got.AH.DGID != sgid.GID) {
		t.Fatalf("%v QP path: dest qpn %d dgid %v", qp.Type(), got.DestQPN, got.AH.DGID)
	}
}

// TestIntegrationUverbsContextClose checks that closing a context makes
// its objects unusable and their Close harmless.
func TestIntegrationUverbsContextClose(t *testing.T) {
	devs := devicesForTest(t)
	c, err := Open(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(CQAttr{CQE: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second context Close: %v", err)
	}
	if err := cq.Close(); err != nil {
		t.Fatalf("CQ Close after the context's: %v", err)
	}
	if _, err := pd.CreateSRQ(SRQAttr{MaxWR: 1, MaxSGE: 1}); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("SRQ in a PD of a closed context: %v", err)
	}
	if _, err := c.QueryDevice(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("query of a closed context: %v", err)
	}
	if err := pd.Close(); err != nil {
		t.Fatal(err)
	}
}

// linkLocalV2 returns the RoCE v2 entry with a link-local (fe80::) GID.
func linkLocalV2(t *testing.T, gids []GIDEntry) GIDEntry {
	t.Helper()
	for _, g := range gids {
		if g.Type == ib.GIDTypeRoCEv2 && g.GID[0] == 0xfe && g.GID[1] == 0x80 {
			return g
		}
	}
	t.Fatalf("no link-local RoCE v2 GID in %v", gids)
	return GIDEntry{}
}
