package device

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// watchUntil reads updates until cond holds for a snapshot, collecting
// every change on the way; 10 s without it fails the test.
func watchUntil(t *testing.T, w *Watcher, what string, seen *[]string, cond func(*Snapshot) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case u, ok := <-w.Updates():
			if !ok {
				t.Fatalf("%s: the watcher stopped: %v", what, w.Err())
			}
			*seen = append(*seen, kinds(u.Changes)...)
			if cond(u.Snapshot) {
				return
			}
		case <-timeout:
			t.Fatalf("%s: not seen in 10 s; changes so far %q", what, *seen)
		}
	}
}

// TestIntegrationWatch adds an rxe device, renames it with iproute2,
// takes its netdev down and deletes it while a watcher runs: each is
// delivered, named as what it is, and Close leaves no fd or goroutine.
func TestIntegrationWatch(t *testing.T) {
	devs := rxetest.Devices(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	testenv.Dummy(t, "rdmstw0")
	rdma, ip := testenv.Oracle(t, "rdma"), testenv.Oracle(t, "ip")
	t.Cleanup(func() {
		for _, n := range []string{"rxew0", "rdmstwfoo"} {
			if d, err := nl.DeviceByName(n); err == nil {
				nl.DeleteLink(d.Index)
			}
		}
	})
	rxetest.NoLeaks(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var seen []string
	first := <-w.Updates()
	if len(first.Snapshot.Devices) != len(devs) || len(first.Changes) != len(devs) || first.Changes[0].Kind != Added {
		t.Fatalf("first update: %d devices, changes %q; want %d added", len(first.Snapshot.Devices), kinds(first.Changes), len(devs))
	}
	has := func(name string) func(*Snapshot) bool {
		return func(s *Snapshot) bool { _, ok := s.ByName(name); return ok }
	}
	testenv.Run(t, rdma, "link", "add", "rxew0", "type", "rxe", "netdev", "rdmstw0")
	watchUntil(t, w, "add", &seen, has("rxew0"))
	d, err := nl.DeviceByName("rxew0")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, rdma, "dev", "set", "rxew0", "name", "rdmstwfoo")
	watchUntil(t, w, "rename", &seen, has("rdmstwfoo"))
	testenv.Run(t, ip, "link", "set", "rdmstw0", "down")
	watchUntil(t, w, "port down", &seen, func(s *Snapshot) bool {
		d, ok := s.ByName("rdmstwfoo")
		return ok && d.Ports[0].State == ib.PortDown
	})
	testenv.Run(t, rdma, "link", "delete", "rdmstwfoo")
	watchUntil(t, w, "delete", &seen, func(s *Snapshot) bool { return !has("rdmstwfoo")(s) })
	idx := itoa(int(d.Index))
	for _, want := range []string{"added " + idx + " rxew0", "renamed " + idx + " rxew0→rdmstwfoo",
		"port-state " + idx + " rdmstwfoo/1", "removed " + idx + " rdmstwfoo"} {
		if !slices.Contains(seen, want) {
			t.Errorf("change %q never delivered; got %q", want, seen)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for range w.Updates() {
	}
	if w.Err() != nil {
		t.Errorf("Err after Close = %v, want nil", w.Err())
	}
}

// TestIntegrationWatchNetNS watches a namespace that sees no device
// (exclusive mode) while a device is added in the caller's: the watcher
// there stays empty; cancelling its context stops it and leaves nothing.
func TestIntegrationWatchNetNS(t *testing.T) {
	rxetest.Devices(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	testenv.Dummy(t, "rdmstwn0")
	rxetest.ExclusiveNetns(t, "rdmstwns0")
	rxetest.NoLeaks(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := WatchNetNS(ctx, NetNSPath("rdmstwns0"))
	if err != nil {
		t.Fatal(err)
	}
	if u := <-w.Updates(); len(u.Snapshot.Devices) != 0 {
		t.Fatalf("the new namespace sees %d devices", len(u.Snapshot.Devices))
	}
	if err := nl.AddLink("rxewn0", nldev.LinkRXE, "rdmstwn0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if d, err := nl.DeviceByName("rxewn0"); err == nil {
			nl.DeleteLink(d.Index)
		}
	})
	select {
	case u := <-w.Updates():
		t.Errorf("the namespace's watcher saw %q", kinds(u.Changes))
	case <-time.After(3 * time.Second):
	}
	cancel()
	for range w.Updates() {
	}
	if w.Err() != context.Canceled {
		t.Errorf("Err after cancel = %v, want context.Canceled", w.Err())
	}
	w.Close()
}
