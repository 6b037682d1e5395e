package device

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/nldev"
)

// fakeInventory answers with whatever set last gave it.
type fakeInventory struct {
	mu     sync.Mutex
	inv    *nldev.Inventory
	err    error
	closed bool
}

func (f *fakeInventory) Inventory() (*nldev.Inventory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	c := *f.inv
	c.Devices = slices.Clone(f.inv.Devices)
	return &c, nil
}

func (f *fakeInventory) Close() error { f.mu.Lock(); f.closed = true; f.mu.Unlock(); return nil }

func (f *fakeInventory) set(devs ...nldev.DeviceInventory) {
	f.mu.Lock()
	f.inv = &nldev.Inventory{Devices: devs}
	f.mu.Unlock()
}

func dev(idx uint32, name string, state ib.PortState, netdev string) nldev.DeviceInventory {
	return nldev.DeviceInventory{
		Device: nldev.Device{Index: idx, Name: name, Ports: 1},
		Ports:  []nldev.Port{{Index: 1, State: state, Netdev: netdev}},
	}
}

func kinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestDiff(t *testing.T) {
	a := joinInv(t, &nldev.Inventory{Devices: []nldev.DeviceInventory{
		dev(1, "rxe0", ib.PortActive, "veth0"), dev(2, "rxe1", ib.PortActive, "veth1"), dev(3, "rxe2", ib.PortActive, "veth2")}})
	b := joinInv(t, &nldev.Inventory{Devices: []nldev.DeviceInventory{
		dev(1, "foo", ib.PortActive, "veth0"), dev(2, "rxe1", ib.PortDown, ""), dev(4, "rxe3", ib.PortActive, "veth3")}})
	got := kinds(diff(a, b))
	want := []string{"renamed 1 rxe0→foo", "port-state 2 rxe1/1", "netdev 2 rxe1/1", "added 4 rxe3", "removed 3 rxe2"}
	if !slices.Equal(got, want) {
		t.Errorf("diff = %q, want %q", got, want)
	}
	if got := kinds(diff(nil, a)); len(got) != 3 || got[0] != "added 1 rxe0" {
		t.Errorf("diff from nothing = %q", got)
	}
	if got := diff(a, a); len(got) != 0 {
		t.Errorf("diff of a snapshot with itself = %q", kinds(got))
	}
	if s := ChangeKind(0).String(); s != "ChangeKind(0)" {
		t.Errorf("ChangeKind(0) = %q", s)
	}
}

// startFake starts a watcher on a fake source, polling every millisecond.
func startFake(t *testing.T, ctx context.Context, f *fakeInventory) *Watcher {
	t.Helper()
	w, err := start(ctx, &watchSockets{nl: f}, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// next waits for the next update whose snapshot has n devices.
func next(t *testing.T, w *Watcher) Update {
	t.Helper()
	select {
	case u, ok := <-w.Updates():
		if !ok {
			t.Fatalf("updates closed: %v", w.Err())
		}
		return u
	case <-time.After(5 * time.Second):
		t.Fatal("no update in 5 s")
	}
	return Update{}
}

// TestWatchCoalesces: a consumer that does not read while devices come,
// get renamed and go gets one update, whose changes run from the last
// snapshot it took to the current one; the watcher never waited on it.
func TestWatchCoalesces(t *testing.T) {
	g0 := runtime.NumGoroutine()
	f := &fakeInventory{}
	f.set(dev(1, "rxe0", ib.PortActive, "veth0"))
	w := startFake(t, context.Background(), f)
	u := next(t, w)
	if got := kinds(u.Changes); !slices.Equal(got, []string{"added 1 rxe0"}) || len(u.Snapshot.Devices) != 1 {
		t.Fatalf("first update %q", got)
	}
	// Churn while nobody reads: the watcher must keep polling regardless.
	for i := range 50 {
		f.set(dev(1, "rxe0", ib.PortActive, "veth0"), dev(uint32(10+i), "tmp", ib.PortActive, ""))
		time.Sleep(200 * time.Microsecond)
	}
	f.set(dev(1, "foo", ib.PortDown, "veth0"), dev(2, "rxe1", ib.PortActive, "veth1"))
	deadline := time.Now().Add(5 * time.Second)
	var all []string
	for {
		u = next(t, w)
		all = append(all, kinds(u.Changes)...)
		if len(u.Snapshot.Devices) == 2 && u.Snapshot.Devices[1].Name == "rxe1" && u.Snapshot.Devices[0].Name == "foo" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never reached the final snapshot: %q", all)
		}
	}
	// The last update's changes are relative to what we took before it.
	if !slices.Contains(kinds(u.Changes), "added 2 rxe1") && !slices.Contains(all, "added 2 rxe1") {
		t.Errorf("rxe1's arrival was never reported: %q", all)
	}
	if !slices.Contains(all, "renamed 1 rxe0→foo") {
		t.Errorf("the rename was never reported: %q", all)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, ok := <-w.Updates(); ok {
		// One update may still be buffered; the channel closes after it.
		if _, ok := <-w.Updates(); ok {
			t.Error("updates still open after Close")
		}
	}
	if w.Err() != nil || !f.closed {
		t.Errorf("after Close: err %v, source closed %v", w.Err(), f.closed)
	}
	waitGoroutines(t, g0)
}

// TestWatchContext: the end of the context stops the watcher, says why,
// and leaves nothing; a failing source stops it with the error.
func TestWatchContext(t *testing.T) {
	g0 := runtime.NumGoroutine()
	f := &fakeInventory{}
	f.set()
	ctx, cancel := context.WithCancel(context.Background())
	w := startFake(t, ctx, f)
	if u := next(t, w); len(u.Snapshot.Devices) != 0 || len(u.Changes) != 0 {
		t.Errorf("first update of no devices: %+v", u)
	}
	cancel()
	for range w.Updates() {
	}
	if !errors.Is(w.Err(), context.Canceled) || !f.closed {
		t.Errorf("after cancel: err %v, closed %v", w.Err(), f.closed)
	}
	w.Close()

	boom := errors.New("boom")
	f2 := &fakeInventory{}
	f2.set()
	w2 := startFake(t, context.Background(), f2)
	f2.mu.Lock()
	f2.err = boom
	f2.mu.Unlock()
	for range w2.Updates() {
	}
	if !errors.Is(w2.Err(), boom) {
		t.Errorf("after a failing inventory: %v", w2.Err())
	}
	w2.Close()
	waitGoroutines(t, g0)
}

func waitGoroutines(t *testing.T, g0 int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > g0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines %d → %d", g0, runtime.NumGoroutine())
		}
	}
}

// TestDeliverMerges drives deliver by hand: pending updates are taken back
// and their changes recomputed against what the consumer saw last, and a
// change undone before it was taken is not delivered at all.
func TestDeliverMerges(t *testing.T) {
	snap := func(devs ...nldev.DeviceInventory) *Snapshot {
		return joinInv(t, &nldev.Inventory{Devices: devs})
	}
	w := &Watcher{ch: make(chan Update, 1)}
	s1 := snap(dev(1, "rxe0", ib.PortActive, "veth0"))
	w.ch <- Update{Snapshot: s1, Changes: diff(nil, s1)}
	s2 := snap(dev(1, "foo", ib.PortActive, "veth0"))
	sent := w.deliver(s1, s2) // the first update was not taken: merged
	u := <-w.ch
	if got := kinds(u.Changes); u.Snapshot != s2 || sent != s2 || !slices.Equal(got, []string{"added 1 foo"}) {
		t.Fatalf("merged first update: %q", got)
	}
	s3 := snap(dev(1, "foo", ib.PortActive, "veth0"), dev(2, "rxe1", ib.PortActive, "veth1"))
	sent = w.deliver(sent, s3)
	s4 := snap(dev(1, "foo", ib.PortActive, "veth0"))
	sent = w.deliver(sent, s4) // rxe1 came and went unseen
	select {
	case u := <-w.ch:
		t.Fatalf("an update of nothing: %q", kinds(u.Changes))
	default:
	}
	if sent != s2 {
		t.Errorf("in flight: %p, want the snapshot the consumer has (%p)", sent, s2)
	}
	s5 := snap(dev(1, "bar", ib.PortDown, "veth0"))
	w.deliver(sent, s5)
	if got := kinds((<-w.ch).Changes); !slices.Equal(got, []string{"renamed 1 foo→bar", "port-state 1 bar/1"}) {
		t.Errorf("changes %q", got)
	}
}

// joinInv is List's join of an inventory over an empty sysfs tree.
func joinInv(t *testing.T, inv *nldev.Inventory) *Snapshot {
	fs := fixture(t.TempDir())
	return join(fs, devcache.Join(fs.FS, inv))
}
