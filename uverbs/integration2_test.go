package uverbs

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// resCounts counts this process's objects on device dev as RDMA netlink's
// resource dumps list them.
type resCounts struct{ ctx, pd, mr, cq, qp, srq int }

// ourThreads is the set of this process's thread ids. The kernel's
// resource tracking reports the id of the thread that created an object
// (task_pid_vnr of the creating task), not the process id: with Go's
// threads, any of them (measured on 6.12).
func ourThreads(t *testing.T) map[uint32]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	m := map[uint32]bool{}
	for _, e := range ents {
		if n, err := strconv.ParseUint(e.Name(), 10, 32); err == nil {
			m[uint32(n)] = true
		}
	}
	return m
}

func countRes(t *testing.T, nl *nldev.Client, dev uint32) resCounts {
	t.Helper()
	ours := ourThreads(t)
	return resCounts{
		ctx: owned(t, ours, dev, nl.Contexts, func(x nldev.Context) uint32 { return x.Owner.PID }),
		pd:  owned(t, ours, dev, nl.PDs, func(x nldev.PD) uint32 { return x.Owner.PID }),
		mr:  owned(t, ours, dev, nl.MRs, func(x nldev.MR) uint32 { return x.Owner.PID }),
		cq:  owned(t, ours, dev, nl.CQs, func(x nldev.CQ) uint32 { return x.Owner.PID }),
		qp:  owned(t, ours, dev, nl.QPs, func(x nldev.QP) uint32 { return x.Owner.PID }),
		srq: owned(t, ours, dev, nl.SRQs, func(x nldev.SRQ) uint32 { return x.Owner.PID }),
	}
}

// owned counts the objects of one kind on device dev that list (an RDMA
// netlink resource dump) returns and one of ours created (pid).
func owned[T any](t *testing.T, ours map[uint32]bool, dev uint32, list func(uint32, ...nldev.ResourceOption) ([]T, error), pid func(T) uint32) int {
	t.Helper()
	xs, err := list(dev)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range xs {
		if ours[pid(x)] {
			n++
		}
	}
	return n
}

// TestIntegrationUverbsResources checks that RDMA netlink's resource
// listing shows each object while it lives and not after.
func TestIntegrationUverbsResources(t *testing.T) {
	d := devicesForTest(t)[0]
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	dev := uint32(d.Index)
	base := countRes(t, nl, dev)
	c, err := Open(d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	mr, err := pd.RegMR(mem, AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(CQAttr{CQE: 8})
	if err != nil {
		t.Fatal(err)
	}
	srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 4, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq, SRQ: srq, Cap: QPCap{MaxSendWR: 2, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	live := countRes(t, nl, dev)
	want := resCounts{base.ctx + 1, base.pd + 1, base.mr + 1, base.cq + 1, base.qp + 1, base.srq + 1}
	if live != want {
		ctxs, err := nl.Contexts(dev)
		qps, _ := nl.QPs(dev)
		t.Fatalf("while the objects live, netlink lists %+v of ours (threads %v), want %+v; contexts %+v (%v); qps %+v",
			live, ourThreads(t), want, ctxs, err, qps)
	}
	lq, err := nl.QPs(dev)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range lq {
		found = found || (x.LQPN == qp.Num() && x.Type == ib.QPTypeRC && x.State == ib.QPStateReset)
	}
	if !found {
		t.Errorf("netlink does not list QP %d as a RESET RC QP: %+v", qp.Num(), lq)
	}
	for _, cl := range []interface{ Close() error }{qp, srq, cq, mr, pd} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	after := countRes(t, nl, dev)
	if want := (resCounts{ctx: base.ctx + 1, pd: base.pd, mr: base.mr, cq: base.cq, qp: base.qp, srq: base.srq}); after != want {
		t.Fatalf("after Close, netlink lists %+v of ours, want %+v", after, want)
	}
	c.Close()
	if got := countRes(t, nl, dev); got != base {
		t.Fatalf("after the context's Close, netlink lists %+v of ours, want %+v", got, base)
	}
}

// TestIntegrationUverbsEvents checks typed async events: a GID change
// when an address is added to the device's netdev, port error and port
// active when the netdev goes down and up.
func TestIntegrationUverbsEvents(t *testing.T) {
	d := devicesForTest(t)[0]
	ip := testenv.Oracle(t, "ip")
	c := openForTest(t, d, InterfaceAuto)
	before, err := c.QueryGIDTable()
	if err != nil {
		t.Fatal(err)
	}
	netdev := "veth0" // the harness puts rxeK on vethK
	if d.Name != "rxe0" {
		t.Fatalf("first device is %s, want rxe0", d.Name)
	}
	expect := func(want EventType) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ev, err := c.GetEvent(until(t, deadline))
			if err != nil {
				t.Fatalf("waiting for %v: %v", want, err)
			}
			t.Logf("event %v element %d", ev.Type, ev.Element)
			if ev.Type == want {
				if ev.Port != 1 {
					t.Fatalf("%v for port %d, want 1", ev.Type, ev.Port)
				}
				return
			}
		}
	}
	testenv.Run(t, ip, "addr", "add", "fd00:77::1/64", "dev", netdev, "nodad")
	t.Cleanup(func() { exec.Command(ip, "addr", "del", "fd00:77::1/64", "dev", netdev).Run() })
	expect(EventGIDChange)
	testenv.Run(t, ip, "addr", "del", "fd00:77::1/64", "dev", netdev)
	expect(EventGIDChange)

	testenv.Run(t, ip, "link", "set", netdev, "down")
	t.Cleanup(func() { exec.Command(ip, "link", "set", netdev, "up").Run() })
	expect(EventPortErr)
	if pa, err := c.QueryPort(1); err != nil || pa.State == ib.PortActive {
		t.Fatalf("port after netdev down: %+v, %v", pa, err)
	}
	testenv.Run(t, ip, "link", "set", netdev, "up")
	expect(EventPortActive)
	// Wait for the link-local GIDs to come back for the tests after us.
	for end := time.Now().Add(10 * time.Second); ; {
		now, err := c.QueryGIDTable()
		if err == nil && len(now) == len(before) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("GID table did not recover: %v, want %v", now, before)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Drain what the link coming back reported (rxe reports
	// PORT_ACTIVE again on the carrier change, and the link-local GIDs'
	// return as GID_CHANGE); then a deadline passes.
	for i := 0; ; i++ {
		ev, err := c.GetEvent(until(t, time.Now().Add(200*time.Millisecond)))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil || i == 50 || !ev.Type.IsPortEvent() || ev.Port != 1 {
			t.Fatalf("draining events: %v port %d, %v", ev.Type, ev.Port, err)
		}
		t.Logf("then %v port %d", ev.Type, ev.Port)
	}

	// A QP on an SRQ moved to the error state: probe for the
	// QP_LAST_WQE_REACHED event, which names the QP.
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(CQAttr{CQE: 4})
	if err != nil {
		t.Fatal(err)
	}
	srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 4, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq, SRQ: srq, Cap: QPCap{MaxSendWR: 2, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// RESET->ERR is not a valid transition (EINVAL): go through INIT.
	if err := qp.Modify(&QPAttr{State: ib.QPStateInit, Port: 1}, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrAccessFlags); err != nil {
		t.Fatal(err)
	}
	if err := qp.Modify(&QPAttr{State: ib.QPStateErr}, QPAttrState); err != nil {
		t.Fatal(err)
	}
	// Measured: Debian's 6.12 rxe reports QP_LAST_WQE_REACHED for a QP on
	// an SRQ entering the error state; 6.1's reports nothing.
	ev, err := c.GetEvent(until(t, time.Now().Add(time.Second)))
	switch {
	case err == nil:
		if ev.Type != EventQPLastWQEReached || ev.QP != qp || ev.Element == 0 {
			t.Fatalf("after QP to ERR: event %v element %d, QP %p (want %p)", ev.Type, ev.Element, ev.QP, qp)
		}
	case errors.Is(err, os.ErrDeadlineExceeded) && strings.HasPrefix(testenv.KernelRelease(), "6.1."):
	default:
		t.Fatalf("after QP to ERR on %s: %v, want QP_LAST_WQE_REACHED", testenv.KernelRelease(), err)
	}
	for _, cl := range []interface{ Close() error }{qp, srq, cq, pd} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIntegrationUverbsDeviceRemoval deletes an rxe device while a
// context on it is open and records what the kernel does.
func TestIntegrationUverbsDeviceRemoval(t *testing.T) {
	const name = "rxe_uvrm"
	rxeOnDummy(t, "uvrm0", name)
	d, err := DeviceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(d)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		nl2, err := nldev.Dial()
		if err != nil {
			done <- err
			return
		}
		defer nl2.Close()
		done <- nl2.DeleteLink(uint32(d.Index))
	}()
	// rxe has no disassociate_ucontext: the kernel's uverbs removal
	// waits for every open context instead of answering EIO (measured on
	// 6.1 and 6.12), and the context keeps working meanwhile.
	select {
	case err := <-done:
		t.Fatalf("DeleteLink returned while a context was open: %v", err)
	case <-time.After(time.Second):
	}
	if _, err := c.QueryDevice(); err != nil {
		t.Fatalf("QueryDevice while the removal waits: %v", err)
	}
	pd2, err := c.AllocPD()
	if err != nil {
		t.Fatalf("AllocPD while the removal waits: %v", err)
	}
	if ev, err := c.GetEvent(until(t, time.Now().Add(200*time.Millisecond))); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("async event while the removal waits: %v, %v (none expected: no DEVICE_FATAL without disassociation)", ev.Type, err)
	}
	for _, cl := range []interface{ Close() error }{pd2, pd, c} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	deleted(t, done)
	if _, err := DeviceByName(name); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s after removal: %v", name, err)
	}
	if _, err := Open(d); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open of the removed device: %v, want os.ErrNotExist", err)
	}
}
