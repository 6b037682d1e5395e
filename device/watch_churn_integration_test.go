package device

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// indexSet is the set of device indexes of a snapshot, by name.
func indexSet(s *Snapshot) map[uint32]string {
	m := make(map[uint32]string, len(s.Devices))
	for _, d := range s.Devices {
		m[d.Index] = d.Name
	}
	return m
}

// applyChanges applies an update's device-level changes (added, removed,
// renamed) to the devices of the snapshot before it.
func applyChanges(before map[uint32]string, cs []Change) map[uint32]string {
	after := make(map[uint32]string, len(before))
	for i, n := range before {
		after[i] = n
	}
	for _, c := range cs {
		switch c.Kind {
		case Added, Renamed:
			after[c.Index] = c.Name
		case Removed:
			delete(after, c.Index)
		}
	}
	return after
}

// kernelDevices lists the devices the kernel has now, by index.
func kernelDevices(t *testing.T, nl *nldev.Client) map[uint32]string {
	t.Helper()
	devs, err := nl.Devices()
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[uint32]string, len(devs))
	for _, d := range devs {
		m[d.Index] = d.Name
	}
	return m
}

// TestIntegrationWatchChurn adds 64 rxe devices, renames a quarter and
// deletes them all while two watchers run: one that takes every update at
// once and one that sleeps after each. The slow one never holds up the
// package (List answers, the fast watcher keeps up), every update it gets
// is exactly the snapshot before it plus its changes, and both end on the
// kernel's devices; Close leaves no fd or goroutine.
func TestIntegrationWatchChurn(t *testing.T) {
	const n = 64
	rxetest.Devices(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	ip := testenv.Oracle(t, "ip")
	var add, del strings.Builder
	for i := range n {
		fmt.Fprintf(&add, "link add rdmstc%d type dummy\nlink set rdmstc%d up\n", i, i)
		fmt.Fprintf(&del, "link del rdmstc%d\n", i)
	}
	batch := func(script string) {
		t.Helper()
		cmd := exec.Command(ip, "-force", "-batch", "-")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ip -batch: %v: %s", err, out)
		}
	}
	batch(add.String())
	// The process's cache keeps its sockets: open them before counting.
	if _, err := List(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := range n {
			for _, name := range []string{fmt.Sprintf("rxec%d", i), fmt.Sprintf("rxecr%d", i)} {
				if d, err := nl.DeviceByName(name); err == nil {
					nl.DeleteLink(d.Index)
				}
			}
		}
		cmd := exec.Command(ip, "-force", "-batch", "-")
		cmd.Stdin = strings.NewReader(del.String())
		cmd.Run()
	})
	rxetest.NoLeaks(t, nil)
	before := kernelDevices(t, nl)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fast, err := Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	slow, err := Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()

	// The slow consumer: checks each update against the one before and
	// sleeps; it publishes the devices of the last update it took.
	var slowMu sync.Mutex
	var slowLast map[uint32]string
	var slowUpdates int
	var slowErr error
	stopSlow := make(chan struct{})
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		var prev map[uint32]string
		for {
			var u Update
			select {
			case u = <-slow.Updates():
			case <-stopSlow:
				return
			}
			got := indexSet(u.Snapshot)
			slowMu.Lock()
			slowUpdates++
			if prev != nil {
				if want := applyChanges(prev, u.Changes); !mapsEqual(want, got) && slowErr == nil {
					slowErr = fmt.Errorf("update %d: the snapshot before plus changes %q gives %d devices, the snapshot has %d", slowUpdates, kinds(u.Changes), len(want), len(got))
				}
			}
			prev, slowLast = got, got
			slowMu.Unlock()
			time.Sleep(300 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		select {
		case <-stopSlow:
		default:
			close(stopSlow)
		}
		<-slowDone
	})

	// The churn, with List asked between the steps: it must answer while
	// the slow watcher lags.
	list := func(what string) {
		t.Helper()
		start := time.Now()
		if _, err := List(); err != nil {
			t.Fatalf("List %s: %v", what, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("List %s took %v with a slow watcher", what, d)
		}
	}
	for i := range n {
		if err := nl.AddLink(fmt.Sprintf("rxec%d", i), nldev.LinkRXE, fmt.Sprintf("rdmstc%d", i)); err != nil {
			t.Fatalf("add rxec%d: %v", i, err)
		}
	}
	list("after adding")
	for i := 0; i < n; i += 4 {
		d, err := nl.DeviceByName(fmt.Sprintf("rxec%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := nl.Rename(d.Index, fmt.Sprintf("rxecr%d", i)); err != nil {
			t.Fatalf("rename rxec%d: %v", i, err)
		}
	}
	list("after renaming")
	mid := kernelDevices(t, nl)
	if len(mid) != len(before)+n {
		t.Fatalf("the kernel has %d devices after adding %d to %d", len(mid), n, len(before))
	}
	// The fast watcher reaches each stage the kernel reached, with every
	// device added and removed seen on the way.
	added, removed := map[uint32]bool{}, map[uint32]bool{}
	reach := func(what string, want map[uint32]string) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case u, ok := <-fast.Updates():
				if !ok {
					t.Fatalf("the fast watcher stopped: %v", fast.Err())
				}
				for _, c := range u.Changes {
					switch c.Kind {
					case Added:
						added[c.Index] = true
					case Removed:
						removed[c.Index] = true
					}
				}
				if mapsEqual(indexSet(u.Snapshot), want) {
					return
				}
			case <-deadline:
				t.Fatalf("the fast watcher did not reach the kernel's devices %s in 60 s (%d added, %d removed seen)", what, len(added), len(removed))
			}
		}
	}
	reach("after adding and renaming", mid)
	for i := range n {
		name := fmt.Sprintf("rxec%d", i)
		if i%4 == 0 {
			name = fmt.Sprintf("rxecr%d", i)
		}
		d, err := nl.DeviceByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := nl.DeleteLink(d.Index); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	list("after deleting")

	final := kernelDevices(t, nl)
	reach("after deleting", final)
	for idx := range mid {
		if _, old := before[idx]; old {
			continue
		}
		if !added[idx] || !removed[idx] {
			t.Errorf("device %d (%s): added seen %v, removed seen %v", idx, mid[idx], added[idx], removed[idx])
		}
	}

	// The slow one catches up with the same devices, having been handed
	// fewer, merged updates.
	testenv.WaitFor(t, "the slow watcher on the kernel's devices", func() bool {
		slowMu.Lock()
		defer slowMu.Unlock()
		return mapsEqual(slowLast, final)
	})
	close(stopSlow)
	<-slowDone
	if slowErr != nil {
		t.Error(slowErr)
	}
	if slowUpdates < 2 || slowUpdates > 2*n {
		t.Errorf("the slow watcher took %d updates for %d devices added, renamed and removed", slowUpdates, n)
	}
	if err := fast.Close(); err != nil {
		t.Error(err)
	}
	if err := slow.Close(); err != nil {
		t.Error(err)
	}
}

func mapsEqual(a, b map[uint32]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestIntegrationWatchNetdevMoved moves the netdev of an rxe device into
// another network namespace while a watcher runs. The kernel unregisters
// the netdev from its old namespace, and rxe deletes its device with it:
// the watcher delivers the removal (of that device only); the netdev
// moved back carries no device until one is added again, which the
// watcher delivers too.
func TestIntegrationWatchNetdevMoved(t *testing.T) {
	devs := rxetest.Devices(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	ip := testenv.Oracle(t, "ip")
	testenv.Dummy(t, "rdmstwm0")
	const ns = "rdmstwmns"
	testenv.Run(t, ip, "netns", "add", ns)
	t.Cleanup(func() {
		exec.Command(ip, "-n", ns, "link", "set", "rdmstwm0", "netns", "1").Run()
		exec.Command(ip, "netns", "del", ns).Run()
	})
	t.Cleanup(func() {
		if d, err := nl.DeviceByName("rxewm0"); err == nil {
			nl.DeleteLink(d.Index)
		}
	})
	if err := nl.AddLink("rxewm0", nldev.LinkRXE, "rdmstwm0"); err != nil {
		t.Fatal(err)
	}
	d, err := nl.DeviceByName("rxewm0")
	if err != nil {
		t.Fatal(err)
	}
	rxetest.NoLeaks(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	first := <-w.Updates()
	if _, ok := first.Snapshot.ByName("rxewm0"); !ok || len(first.Snapshot.Devices) != len(devs)+1 {
		t.Fatalf("first update: %d devices (rxewm0 %v), want %d", len(first.Snapshot.Devices), ok, len(devs)+1)
	}

	testenv.Run(t, ip, "link", "set", "rdmstwm0", "netns", ns)
	var seen []string
	watchUntil(t, w, "netdev moved away", &seen, func(s *Snapshot) bool { _, ok := s.ByName("rxewm0"); return !ok })
	if _, err := nl.DeviceByName("rxewm0"); err == nil {
		t.Fatal("rxewm0 is still listed by the kernel after its netdev left the namespace")
	}
	idx := itoa(int(d.Index))
	if !slices.Contains(seen, "removed "+idx+" rxewm0") {
		t.Errorf("the move was delivered as %q, want the removal of %s rxewm0", seen, idx)
	}
	for _, s := range seen {
		if !strings.HasSuffix(s, " rxewm0") && !strings.Contains(s, " rxewm0/") {
			t.Errorf("the move changed another device: %q", s)
		}
	}

	testenv.Run(t, ip, "-n", ns, "link", "set", "rdmstwm0", "netns", "1")
	testenv.Run(t, ip, "link", "set", "rdmstwm0", "up")
	seen = nil
	if err := nl.AddLink("rxewm0", nldev.LinkRXE, "rdmstwm0"); err != nil {
		t.Fatalf("rxe on the netdev moved back: %v", err)
	}
	watchUntil(t, w, "device on the netdev moved back", &seen, func(s *Snapshot) bool {
		d, ok := s.ByName("rxewm0")
		return ok && len(d.Ports) == 1 && d.Ports[0].Netdev == "rdmstwm0"
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for range w.Updates() {
	}
}

// TestIntegrationCharDevicesModules unloads ib_umad and rdma_ucm and
// loads them again: List drops each module's char devices as it goes and
// has them back, with the device numbers of their nodes, as it comes.
func TestIntegrationCharDevicesModules(t *testing.T) {
	devs := rxetest.Devices(t)
	if !testenv.InVM() {
		testenv.Skip(t, "unloads ib_umad and rdma_ucm: only in the test VM")
	}
	for _, m := range []string{"ib_umad", "rdma_ucm"} {
		if _, err := os.Stat("/sys/module/" + m); err != nil {
			t.Fatalf("%s is not loaded in the guest: %v", m, err)
		}
	}
	load := func(m, node string) {
		t.Helper()
		if _, err := os.Stat("/sys/module/" + m); err == nil {
			return
		}
		if out, err := exec.Command("modprobe", m).CombinedOutput(); err != nil {
			t.Fatalf("modprobe %s: %v: %s", m, err, out)
		}
		testenv.WaitFor(t, node, func() bool { _, err := os.Stat(node); return err == nil })
	}
	t.Cleanup(func() {
		load("ib_umad", "/dev/infiniband/umad0")
		load("rdma_ucm", "/dev/infiniband/rdma_cm")
	})
	count := func(s *Snapshot, kind nldev.ChardevType) (n int) {
		for _, d := range s.Devices {
			for _, c := range d.CharDevices() {
				if c.Kind == kind {
					n++
				}
			}
		}
		for _, c := range s.SystemCharDevices() {
			if c.Kind == kind {
				n++
			}
		}
		return n
	}
	// The nodes listed are the nodes in /dev, by number.
	checkNodes := func(s *Snapshot) {
		t.Helper()
		for _, d := range s.Devices {
			for _, c := range s.CharDevicesOf(d) {
				var st unix.Stat_t
				if err := unix.Stat(c.Path, &st); err != nil {
					t.Errorf("%s: %v", c.Path, err)
					continue
				}
				if unix.Major(st.Rdev) != c.Major || unix.Minor(st.Rdev) != c.Minor {
					t.Errorf("%s is %d:%d, listed as %d:%d", c.Path, unix.Major(st.Rdev), unix.Minor(st.Rdev), c.Major, c.Minor)
				}
			}
		}
	}
	s, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if got := count(s, nldev.ChardevUmad); got != len(devs) {
		t.Fatalf("%d umad nodes listed for %d one-port devices", got, len(devs))
	}
	if count(s, nldev.ChardevRdmaCM) != 1 {
		t.Fatal("rdma_cm not listed with rdma_ucm loaded")
	}
	// issm nodes are listed where the kernel tells them (an InfiniBand
	// port's subnet manager: rxe's RoCE ports have none through RDMA
	// netlink); as many come back.
	issm0 := count(s, nldev.ChardevIssm)
	checkNodes(s)

	for _, step := range []struct {
		module string
		kinds  []nldev.ChardevType
	}{
		{"ib_umad", []nldev.ChardevType{nldev.ChardevUmad, nldev.ChardevIssm}},
		{"rdma_ucm", []nldev.ChardevType{nldev.ChardevRdmaCM}},
	} {
		if out, err := exec.Command("rmmod", step.module).CombinedOutput(); err != nil {
			t.Fatalf("rmmod %s: %v: %s", step.module, err, out)
		}
		s, err := List()
		if err != nil {
			t.Fatalf("List without %s: %v", step.module, err)
		}
		for _, k := range step.kinds {
			if n := count(s, k); n != 0 {
				t.Errorf("without %s, %d %s nodes listed", step.module, n, k)
			}
		}
		if n := count(s, nldev.ChardevUverbs); n != len(devs) {
			t.Errorf("without %s, %d uverbs nodes listed for %d devices", step.module, n, len(devs))
		}
		checkNodes(s)
	}
	load("ib_umad", "/dev/infiniband/umad0")
	load("rdma_ucm", "/dev/infiniband/rdma_cm")
	var last string
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := List()
		if err != nil {
			t.Fatal(err)
		}
		umad, issm, cm := count(s, nldev.ChardevUmad), count(s, nldev.ChardevIssm), count(s, nldev.ChardevRdmaCM)
		if umad == len(devs) && issm == issm0 && cm == 1 {
			break
		}
		last = fmt.Sprintf("umad %d, issm %d, rdma_cm %d for %d devices", umad, issm, cm, len(devs))
		if time.Now().After(deadline) {
			t.Fatalf("the char devices not listed again in 20 s: %s", last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s, err = List()
	if err != nil {
		t.Fatal(err)
	}
	checkNodes(s)
}

// TestIntegrationWatchMonitor runs a watcher woken by RDMA netlink's
// monitor alone (no uevent or link socket, and a poll an hour apart), as
// in a namespace where uevents are not delivered: on a kernel with the
// monitor (6.12) a device added and deleted is delivered at once; on one
// without it, DialMonitor's error matches nldev.ErrNotSupported, and the
// watcher there relies on its poll.
func TestIntegrationWatchMonitor(t *testing.T) {
	rxetest.Devices(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	sys, err := nl.System()
	if err != nil {
		t.Fatal(err)
	}
	mon, err := nldev.DialMonitor()
	if sys.Monitor == nil || !*sys.Monitor {
		if !errors.Is(err, nldev.ErrNotSupported) {
			t.Fatalf("DialMonitor on a kernel without the monitor: %v, want ErrNotSupported", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	testenv.Dummy(t, "rdmstmo0")
	t.Cleanup(func() {
		if d, err := nl.DeviceByName("rxemo0"); err == nil {
			nl.DeleteLink(d.Index)
		}
	})
	rxetest.NoLeaks(t, nil)
	c, err := nldev.Dial()
	if err != nil {
		mon.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := start(ctx, &watchSockets{nl: c, mon: mon}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	<-w.Updates()
	var seen []string
	if err := nl.AddLink("rxemo0", nldev.LinkRXE, "rdmstmo0"); err != nil {
		t.Fatal(err)
	}
	watchUntil(t, w, "add, by the monitor", &seen, func(s *Snapshot) bool { _, ok := s.ByName("rxemo0"); return ok })
	d, err := nl.DeviceByName("rxemo0")
	if err != nil {
		t.Fatal(err)
	}
	if err := nl.DeleteLink(d.Index); err != nil {
		t.Fatal(err)
	}
	watchUntil(t, w, "delete, by the monitor", &seen, func(s *Snapshot) bool { _, ok := s.ByName("rxemo0"); return !ok })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for range w.Updates() {
	}
}
