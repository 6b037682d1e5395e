package rdma

import (
	"errors"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/uverbs"
)

// fakeSource is a kernel whose devices the test adds and removes; each
// change makes a new generation, as package device's snapshot does.
type fakeSource struct {
	mu      sync.Mutex
	gen     uint64
	present []uverbs.Device
	listed  int // how many times devices handed the devices out
	asked   int // how many times devices was called
	err     error
	opened  map[ident]int
	closed  map[ident]int
	failing map[string]bool
}

func newFakeSource(names ...string) *fakeSource {
	f := &fakeSource{gen: 1, opened: map[ident]int{}, closed: map[ident]int{}, failing: map[string]bool{}}
	for i, n := range names {
		f.present = append(f.present, uverbs.Device{Name: n, Index: uint32(i), Uverbs: "uverbs" + strconv.Itoa(i)})
	}
	return f
}

func (f *fakeSource) devices(since uint64) (uint64, []uverbs.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.err != nil {
		return 0, nil, f.err
	}
	if since == f.gen {
		return f.gen, nil, nil
	}
	f.listed++
	return f.gen, append([]uverbs.Device(nil), f.present...), nil
}

func (f *fakeSource) open(dev uverbs.Device) (*Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := identOf(dev)
	if f.failing[id.name] {
		return nil, unix.EIO
	}
	f.opened[id]++
	return &Device{name: id.name, index: int64(id.index), node: dev.Uverbs, close: func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.closed[id]++
		return nil
	}}, nil
}

func (f *fakeSource) add(dev uverbs.Device) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.present = append(f.present, dev)
	f.gen++
}

func (f *fakeSource) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, d := range f.present {
		if d.Name == name {
			f.present = append(f.present[:i], f.present[i+1:]...)
			f.gen++
			return
		}
	}
}

func names(list []*Device) string {
	var s []string
	for _, d := range list {
		s = append(s, d.Name())
	}
	return strings.Join(s, ",")
}

func TestContract(t *testing.T) {
	src := newFakeSource("rxe0", "rxe1")
	c := newCache(src)

	l1, err := c.get()
	if err != nil || names(l1) != "rxe0,rxe1" {
		t.Fatalf("get: %v %v", names(l1), err)
	}
	l2, err := c.get()
	if err != nil {
		t.Fatal(err)
	}
	if l1[0] != l2[0] || l1[1] != l2[1] || &l1[0] == &l2[0] {
		t.Fatal("two lists must be two slices sharing the cached devices")
	}
	if src.opened[ident{"rxe0", 0}] != 1 {
		t.Fatalf("rxe0 opened %d times, want once", src.opened[ident{"rxe0", 0}])
	}
	if src.listed != 1 {
		t.Fatalf("the source handed out its devices %d times for one generation, want once", src.listed)
	}
	if c.outstanding() != 2 || l1[0].refs != 2 {
		t.Fatalf("outstanding %d refs %d", c.outstanding(), l1[0].refs)
	}

	c.free(nil)
	c.free([]*Device{})
	c.free(l1[1:]) // not a list GetDevices returned
	c.free(l1)
	c.free(l1) // twice: nothing
	if c.outstanding() != 1 || l2[0].refs != 1 {
		t.Fatalf("after freeing l1: outstanding %d refs %d", c.outstanding(), l2[0].refs)
	}
	l2[0], l2[1] = l2[1], l2[0] // the caller may reorder its slice: the references stay right
	c.free(l2)
	if c.outstanding() != 0 || l2[0].refs != 0 || l2[1].refs != 0 {
		t.Fatalf("after freeing everything: outstanding %d refs %d %d", c.outstanding(), l2[0].refs, l2[1].refs)
	}
	if src.closed[ident{"rxe0", 0}] != 0 {
		t.Fatal("a live device was closed when its lists were freed")
	}
}

func TestDeviceRemoved(t *testing.T) {
	src := newFakeSource("rxe0", "rxe1")
	c := newCache(src)
	held, _ := c.get()
	rxe1 := held[1]

	src.remove("rxe1")
	l, err := c.get()
	if err != nil || names(l) != "rxe0" {
		t.Fatalf("after removal: %v %v", names(l), err)
	}
	if !rxe1.Dead() {
		t.Fatal("removed device not marked dead")
	}
	for _, err := range []error{
		func() error { _, err := rxe1.Context(); return err }(),
		func() error { _, err := rxe1.Attr(); return err }(),
		func() error { _, err := rxe1.Port(1); return err }(),
	} {
		if !errors.Is(err, ErrDeviceRemoved) {
			t.Errorf("a dead device's method = %v, want ErrDeviceRemoved", err)
		}
	}
	if src.closed[ident{"rxe1", 1}] != 0 {
		t.Fatal("closed while a list still holds it")
	}
	c.free(held)
	if src.closed[ident{"rxe1", 1}] != 1 {
		t.Fatalf("dead device closed %d times after its last reference, want 1", src.closed[ident{"rxe1", 1}])
	}
	c.free(l)
	c.free(held)
	if src.closed[ident{"rxe1", 1}] != 1 || src.closed[ident{"rxe0", 0}] != 0 {
		t.Fatal("a second free closed something")
	}

	// A device that comes back under the same name (new index) is new.
	src.add(uverbs.Device{Name: "rxe1", Index: 7, Uverbs: "uverbs7"})
	l, _ = c.get()
	if names(l) != "rxe0,rxe1" || l[1].Dead() || l[1].Index() != 7 {
		t.Fatalf("re-added device: %v", names(l))
	}
	c.free(l)
}

func TestNoDevices(t *testing.T) {
	src := newFakeSource("rxe0")
	src.failing["rxe0"] = true // a device that fails to open is skipped
	c := newCache(src)
	if _, err := c.get(); !errors.Is(err, ErrNoDevices) || !errors.Is(err, unix.ENODEV) {
		t.Fatalf("get with no usable device = %v, want ErrNoDevices", err)
	}
	if c.outstanding() != 0 {
		t.Fatal("a failed get left a list")
	}
}

// TestOpenRetried: a device that failed to open is tried again by the
// next GetDevices, though the source has not changed.
func TestOpenRetried(t *testing.T) {
	src := newFakeSource("rxe0", "rxe1")
	src.failing["rxe1"] = true
	c := newCache(src)
	l, err := c.get()
	if err != nil || names(l) != "rxe0" {
		t.Fatalf("get with rxe1 failing: %v %v", names(l), err)
	}
	c.free(l)
	src.mu.Lock()
	src.failing["rxe1"] = false
	src.mu.Unlock()
	l, err = c.get()
	if err != nil || names(l) != "rxe0,rxe1" {
		t.Fatalf("get once rxe1 opens: %v %v", names(l), err)
	}
	c.free(l)
	if src.opened[ident{"rxe0", 0}] != 1 || src.opened[ident{"rxe1", 1}] != 1 {
		t.Fatalf("opened %v, want each device once", src.opened)
	}
}

// TestNoUverbsSkipped: a device without a uverbs char device is left out
// without an attempt to open it, and costs no re-listing.
func TestNoUverbsSkipped(t *testing.T) {
	src := newFakeSource("rxe0")
	src.add(uverbs.Device{Name: "nouverbs0", Index: 5})
	c := newCache(src)
	for range 3 {
		l, err := c.get()
		if err != nil || names(l) != "rxe0" {
			t.Fatalf("get: %v %v", names(l), err)
		}
		c.free(l)
	}
	if src.opened[ident{"nouverbs0", 5}] != 0 || src.listed != 1 {
		t.Fatalf("nouverbs0 opened %d times, devices listed %d times; want 0 and 1", src.opened[ident{"nouverbs0", 5}], src.listed)
	}
}

// TestDeviceBack: a dead device still held whose identity is present
// again (the thread came back to its namespace) is opened afresh; the
// dead one stays dead with its list and is closed when that is freed.
func TestDeviceBack(t *testing.T) {
	src := newFakeSource("rxe0")
	c := newCache(src)
	held, _ := c.get()
	old := held[0]
	src.remove("rxe0")
	if _, err := c.get(); !errors.Is(err, ErrNoDevices) {
		t.Fatalf("get with rxe0 gone = %v, want ErrNoDevices", err)
	}
	src.add(uverbs.Device{Name: "rxe0", Index: 0, Uverbs: "uverbs0"})
	l, err := c.get()
	if err != nil || names(l) != "rxe0" || l[0] == old || l[0].Dead() || !old.Dead() {
		t.Fatalf("rxe0 back: %v %v; new %p dead %v, old %p dead %v", names(l), err, l[0], l[0].Dead(), old, old.Dead())
	}
	c.free(held)
	if src.closed[ident{"rxe0", 0}] != 1 {
		t.Fatalf("closed %d times after the dead one's list was freed, want 1", src.closed[ident{"rxe0", 0}])
	}
	c.free(l)
	if again, _ := c.get(); len(again) != 1 || again[0] != l[0] {
		t.Fatal("freeing the dead device's list dropped its successor")
	} else {
		c.free(again)
	}
	if src.closed[ident{"rxe0", 0}] != 1 {
		t.Fatal("the live device was closed")
	}
}

// TestSourceError: the source's error comes back naming the operation,
// and leaves no list.
func TestSourceError(t *testing.T) {
	src := newFakeSource("rxe0")
	src.err = unix.EPERM
	c := newCache(src)
	_, err := c.get()
	if !errors.Is(err, unix.EPERM) || !strings.Contains(err.Error(), "get devices") {
		t.Fatalf("get = %v, want EPERM naming get devices", err)
	}
	if c.outstanding() != 0 {
		t.Fatal("a failed get left a list")
	}
}

// TestKernelSourceIsDevcache: the kernel source is the process's one
// snapshot (devcache.Global, which package device's List shares), asked
// with the generation the cache last brought itself up to: the cache has
// no socket of its own.
func TestKernelSourceIsDevcache(t *testing.T) {
	if reflect.ValueOf(global.src.(kernelSource).verbs).Pointer() != reflect.ValueOf(devcache.Global.Verbs).Pointer() {
		t.Fatal("rdma's device list is not built on devcache.Global")
	}
	var asked []uint64
	verbs := func(since uint64) (uint64, []uverbs.Device, error) {
		asked = append(asked, since)
		if since == 4 {
			return 4, nil, nil
		}
		return 4, []uverbs.Device{{Name: "nouverbs0", Index: 2}}, nil
	}
	c := newCache(kernelSource{verbs: verbs})
	for range 2 {
		if _, err := c.get(); !errors.Is(err, ErrNoDevices) {
			t.Fatalf("get with only a device without uverbs = %v, want ErrNoDevices", err)
		}
	}
	if !slices.Equal(asked, []uint64{0, 4}) {
		t.Fatalf("Verbs asked with %v, want [0 4]", asked)
	}
}

func TestLeakReported(t *testing.T) {
	src := newFakeSource("rxe0")
	c := newCache(src)
	c.debug = true
	reports := make(chan LeakReport, 1)
	c.leak = func(r LeakReport) { reports <- r }

	func() {
		l, err := c.get() // and forgotten
		if err != nil {
			t.Fatal(err)
		}
		_ = l
	}()
	if c.outstanding() != 1 {
		t.Fatal("no outstanding list")
	}
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case r := <-reports:
			if strings.Join(r.Devices, ",") != "rxe0" || !strings.Contains(r.Where, "TestLeakReported") {
				t.Fatalf("report %+v", r)
			}
			if c.outstanding() != 0 {
				t.Fatal("the leaked list is still outstanding")
			}
			for _, d := range c.devs {
				if d.refs != 0 {
					t.Fatalf("the leaked list's reference on %s was not released", d.name)
				}
			}
			return
		case <-deadline:
			t.Fatal("a collected, unfreed list was not reported")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestFreedListNotReported(t *testing.T) {
	c := newCache(newFakeSource("rxe0"))
	c.leak = func(r LeakReport) { t.Errorf("freed list reported as a leak: %v", r) }
	l, _ := c.get()
	c.free(l)
	l = nil
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// TestGetWithKnownDevice: binding an id opens its device alone, and asks
// the source again only for an index the cache does not know; the other
// devices open when a whole list is asked for.
func TestGetWithKnownDevice(t *testing.T) {
	f := newFakeSource("rxe0", "rxe1")
	c := newCache(f)
	var guid ib.GUID // the fake devices' attributes are zero
	list, err := c.getWith(guid, 1)
	if err != nil || names(list) != "rxe1" || f.asked != 1 || f.opened[ident{"rxe0", 0}] != 0 {
		t.Fatalf("first getWith: %q, %v, source asked %d times, opened %v", names(list), err, f.asked, f.opened)
	}
	c.free(list)
	list, err = c.getWith(guid, 1)
	if err != nil || names(list) != "rxe1" || f.asked != 1 || f.opened[ident{"rxe1", 1}] != 1 {
		t.Fatalf("getWith of a known device: %q, %v, source asked %d times, opened %v; want no new question or open", names(list), err, f.asked, f.opened)
	}
	c.free(list)
	f.add(uverbs.Device{Name: "rxe2", Index: 7, Uverbs: "uverbs7"})
	list, err = c.getWith(guid, 7)
	if err != nil || names(list) != "rxe1,rxe2" || f.asked != 2 {
		t.Fatalf("getWith of a new device: %q, %v, source asked %d times", names(list), err, f.asked)
	}
	c.free(list)
	list, err = c.getWith(guid, 0) // known to the cache, not yet open
	if err != nil || names(list) != "rxe0,rxe1,rxe2" || f.asked != 2 {
		t.Fatalf("getWith of an unopened device: %q, %v, source asked %d times", names(list), err, f.asked)
	}
	c.free(list)
	if list, err := c.getWith(guid, 9); !errors.Is(err, ErrDeviceRemoved) || list != nil || f.asked != 3 {
		t.Fatalf("getWith of an index no device has: %q, %v, source asked %d times", names(list), err, f.asked)
	}
	list, err = c.get()
	if err != nil || names(list) != "rxe0,rxe1,rxe2" {
		t.Fatalf("get: %q, %v", names(list), err)
	}
	c.free(list)
	for id, n := range f.opened {
		if n != 1 {
			t.Errorf("%v opened %d times, want once", id, n)
		}
	}
	if n := c.outstanding(); n != 0 {
		t.Fatalf("%d lists outstanding", n)
	}
}

// TestGetWithFailingDevice: an id's device that fails to open fails the
// binding with the open's error, and is tried again the next time.
func TestGetWithFailingDevice(t *testing.T) {
	f := newFakeSource("rxe0", "rxe1")
	f.failing["rxe1"] = true
	c := newCache(f)
	var guid ib.GUID
	if list, err := c.getWith(guid, 1); !errors.Is(err, unix.EIO) || list != nil || c.outstanding() != 0 {
		t.Fatalf("getWith of a device that fails to open: %q, %v, %d lists", names(list), err, c.outstanding())
	}
	f.mu.Lock()
	f.failing["rxe1"] = false
	f.mu.Unlock()
	list, err := c.getWith(guid, 1)
	if err != nil || names(list) != "rxe1" || f.opened[ident{"rxe0", 0}] != 0 {
		t.Fatalf("getWith once rxe1 opens: %q, %v, opened %v", names(list), err, f.opened)
	}
	c.free(list)
}
