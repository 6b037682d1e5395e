package rdma

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeSource is a kernel whose devices the test adds and removes.
type fakeSource struct {
	mu      sync.Mutex
	present []ident
	opened  map[ident]int
	closed  map[ident]int
	failing map[string]bool
}

func newFakeSource(names ...string) *fakeSource {
	f := &fakeSource{opened: map[ident]int{}, closed: map[ident]int{}, failing: map[string]bool{}}
	for i, n := range names {
		f.present = append(f.present, ident{n, uint32(i)})
	}
	return f
}

func (f *fakeSource) list() ([]ident, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ident(nil), f.present...), nil
}

func (f *fakeSource) open(id ident) (*Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing[id.name] {
		return nil, unix.EIO
	}
	f.opened[id]++
	return &Device{name: id.name, index: int64(id.index), close: func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.closed[id]++
		return nil
	}}, nil
}

func (f *fakeSource) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, id := range f.present {
		if id.name == name {
			f.present = append(f.present[:i], f.present[i+1:]...)
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
	src.mu.Lock()
	src.present = append(src.present, ident{"rxe1", 7})
	src.mu.Unlock()
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
