package rdma

import (
	"errors"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationGetDevices: every device, opened and queried, agrees with
// RDMA netlink.
func TestIntegrationGetDevices(t *testing.T) {
	testenv.RequireRDMA(t)
	list, err := GetDevices()
	if err != nil {
		t.Fatalf("GetDevices: %v", err)
	}
	t.Cleanup(func() { FreeDevices(list) })
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(devs) {
		t.Fatalf("GetDevices has %d devices, netlink %d", len(list), len(devs))
	}
	if n := os.Getenv("RDMASTACK_VM_DEVICES"); n != "" && strconv.Itoa(len(list)) != n {
		t.Fatalf("GetDevices has %d devices, the VM made %s", len(list), n)
	}
	for i, d := range list {
		attr, err := d.Attr()
		if err != nil {
			t.Fatal(err)
		}
		if d.Name() != devs[i].Name || attr.NodeGUID != devs[i].NodeGUID || int(attr.PhysPortCount) != int(devs[i].Ports) {
			t.Errorf("%s: attr GUID %s ports %d; netlink %s %s %d", d.Name(), attr.NodeGUID, attr.PhysPortCount, devs[i].Name, devs[i].NodeGUID, devs[i].Ports)
		}
		p, err := d.Port(1)
		if err != nil || p.State.String() != "ACTIVE" {
			t.Errorf("%s port 1: %+v, %v", d.Name(), p, err)
		}
		ctx, err := d.Context()
		if err != nil {
			t.Fatal(err)
		}
		pd, err := ctx.AllocPD() // the shared context works
		if err != nil {
			t.Fatalf("%s: alloc pd on the shared context: %v", d.Name(), err)
		}
		pd.Close()
	}
	again, err := GetDevices()
	if err != nil {
		t.Fatal(err)
	}
	defer FreeDevices(again)
	if again[0] != list[0] {
		t.Fatal("a second list did not share the cached devices")
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// fdTargets maps each of the process's open fds to what it refers to.
func fdTargets(t *testing.T) map[string]string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			m[e.Name()] = target
		}
	}
	return m
}

// fdChanges says which fds differ between two fdTargets.
func fdChanges(before, after map[string]string) string {
	var s []string
	for fd, target := range after {
		if before[fd] != target {
			s = append(s, "+"+fd+"="+target)
		}
	}
	for fd, target := range before {
		if after[fd] != target {
			s = append(s, "-"+fd+"="+target)
		}
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// TestIntegrationCyclesDoNotLeak: 10,000 GetDevices/FreeDevices cycles
// leave the open fds, the goroutines and the outstanding lists unchanged.
func TestIntegrationCyclesDoNotLeak(t *testing.T) {
	testenv.RequireRDMA(t)
	warm, err := GetDevices() // the first call opens the cache's devices
	if err != nil {
		t.Fatal(err)
	}
	FreeDevices(warm)
	fds, gor, out := openFDs(t), runtime.NumGoroutine(), Outstanding()
	for i := 0; i < 10000; i++ {
		l, err := GetDevices()
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		FreeDevices(l)
	}
	if got := openFDs(t); got != fds {
		t.Errorf("open fds %d -> %d", fds, got)
	}
	if got := runtime.NumGoroutine(); got > gor {
		t.Errorf("goroutines %d -> %d", gor, got)
	}
	if got := Outstanding(); got != out {
		t.Errorf("outstanding lists %d -> %d", out, got)
	}
}

// TestIntegrationDeleteWhileHeld deletes an rxe device while a list holds
// it: the device is marked dead, later lists leave it out, and its
// context is closed with the last reference — which is what lets the
// kernel finish deleting an rxe device (rxe cannot disassociate contexts,
// so the deletion waits for them).
func TestIntegrationDeleteWhileHeld(t *testing.T) {
	testenv.RequireRDMA(t)
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	warm, err := GetDevices() // the cache's netlink socket and devices, before counting
	if err != nil {
		t.Fatal(err)
	}
	FreeDevices(warm)
	fds := fdTargets(t)
	testenv.Dummy(t, "rdmstgone0")
	if err := c.AddLink("rxegone0", nldev.LinkRXE, "rdmstgone0"); err != nil {
		t.Fatal(err)
	}
	nd, err := c.DeviceByName("rxegone0")
	if err != nil {
		t.Fatal(err)
	}

	held, err := GetDevices()
	if err != nil {
		t.Fatal(err)
	}
	var gone *Device
	for _, d := range held {
		if d.Name() == "rxegone0" {
			gone = d
		}
	}
	if gone == nil {
		t.Fatal("the new device is not in the list")
	}
	deleted := make(chan error, 1)
	go func() {
		del, err := nldev.Dial()
		if err != nil {
			deleted <- err
			return
		}
		err = del.DeleteLink(nd.Index)
		del.Close() // before the send: the fds are counted once it is received
		deleted <- err
	}()

	// The kernel unlists the device at once, then waits for its contexts.
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := GetDevices()
		if err != nil {
			t.Fatal(err)
		}
		still := false
		for _, d := range l {
			still = still || d == gone
		}
		FreeDevices(l)
		if !still {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted device is still listed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !gone.Dead() {
		t.Fatal("the deleted device is not marked dead")
	}
	if _, err := gone.Context(); !errors.Is(err, ErrDeviceRemoved) {
		t.Fatalf("Context of a dead device = %v", err)
	}
	select {
	case err := <-deleted:
		t.Fatalf("DeleteLink returned (%v) while a context was open", err)
	case <-time.After(100 * time.Millisecond):
	}
	FreeDevices(held) // the last reference: the context is closed
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatalf("DeleteLink: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("DeleteLink still waits after the last reference was released")
	}
	if got := fdTargets(t); len(got) != len(fds) {
		t.Errorf("open fds %d -> %d after the dead device was released: %s", len(fds), len(got), fdChanges(fds, got))
	}
}

// TestIntegrationSeesChanges: once the cache is warm, a device added or
// renamed is in the very next list, with no waiting: the kernel's events
// are queued before its netlink command returns.
func TestIntegrationSeesChanges(t *testing.T) {
	testenv.RequireRDMA(t)
	warm, err := GetDevices()
	if err != nil {
		t.Fatal(err)
	}
	FreeDevices(warm)
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() }) // last: the cleanups below use it
	testenv.Dummy(t, "rdmstseen0")
	if err := c.AddLink("rxeseen0", nldev.LinkRXE, "rdmstseen0"); err != nil {
		t.Fatal(err)
	}
	nd, err := c.DeviceByName("rxeseen0")
	if err != nil {
		t.Fatal(err)
	}
	// Deleting waits for the cache to close its context: the device is
	// seen to go by the GetDevices calls that follow, below or in later
	// tests, and the cleanup runs in the background, bounded.
	t.Cleanup(func() {
		done := make(chan error, 1)
		go func() { done <- c.DeleteLink(nd.Index) }()
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("delete rxeseen1: %v", err)
				}
				return
			case <-time.After(10 * time.Millisecond):
				l, err := GetDevices()
				if err == nil {
					FreeDevices(l)
				}
			}
		}
	})

	names := func() map[string]bool {
		t.Helper()
		l, err := GetDevices()
		if err != nil {
			t.Fatal(err)
		}
		defer FreeDevices(l)
		m := map[string]bool{}
		for _, d := range l {
			m[d.Name()] = true
		}
		return m
	}
	if got := names(); !got["rxeseen0"] {
		t.Fatalf("right after rdma link add, GetDevices lacks rxeseen0: %v", got)
	}
	if err := c.Rename(nd.Index, "rxeseen1"); err != nil {
		t.Fatal(err)
	}
	if got := names(); !got["rxeseen1"] || got["rxeseen0"] {
		t.Fatalf("right after the rename, GetDevices has %v; want rxeseen1 and not rxeseen0", got)
	}
}

// TestIntegrationSharedContext: the context Device.Context hands out is
// not its users' to close: Close fails with uverbs.ErrShared and the
// context keeps working. Attr and Port hand out copies.
func TestIntegrationSharedContext(t *testing.T) {
	testenv.RequireRDMA(t)
	list, err := GetDevices()
	if err != nil {
		t.Fatalf("GetDevices: %v", err)
	}
	t.Cleanup(func() { FreeDevices(list) })
	d := list[0]
	ctx, err := d.Context()
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); !errors.Is(err, uverbs.ErrShared) || !strings.Contains(err.Error(), "close") {
		t.Fatalf("%s: Close on the shared context: %v, want uverbs.ErrShared", d.Name(), err)
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatalf("%s: alloc pd after the refused Close: %v", d.Name(), err)
	}
	if err := pd.Close(); err != nil {
		t.Fatal(err)
	}
	if again, err := d.Context(); err != nil || again != ctx {
		t.Fatalf("%s: a second Context: %p, %v; want the same %p", d.Name(), again, err, ctx)
	}
	attr, err := d.Attr()
	if err != nil || attr.MaxQPWR == 0 {
		t.Fatalf("%s: Attr: %+v, %v", d.Name(), attr, err)
	}
	attr.MaxQPWR = 0
	if again, _ := d.Attr(); again.MaxQPWR == 0 {
		t.Fatalf("%s: a change to Attr's result reached the cache", d.Name())
	}
	p, err := d.Port(1)
	if err != nil {
		t.Fatal(err)
	}
	state := p.State
	p.State = 0
	if again, _ := d.Port(1); again.State != state {
		t.Fatalf("%s: a change to Port's result reached the cache", d.Name())
	}
}
