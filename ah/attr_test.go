package ah

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func newRoCETable(t testing.TB) *Table {
	t.Helper()
	tab, err := NewTable(PortSpec{Port: 1, Size: 16, RoCE: true})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func gid(last byte) ib.GID { return ib.GID{0: 0xfe, 1: 0x80, 15: last} }

func TestZeroAndNilDestroy(t *testing.T) {
	var a Attr
	Destroy(&a)
	Destroy(&a)
	Destroy(nil)
	if a.GRH.SGIDAttr() != nil || a.Stale() {
		t.Fatal("zero attribute owns something")
	}
}

func TestLifecycle(t *testing.T) {
	tab := newRoCETable(t)
	e, err := tab.Add(1, 1, gid(1), ib.GIDTypeRoCEv2, "veth0")
	if err != nil {
		t.Fatal(err)
	}
	held, err := tab.Get(1, 1)
	if err != nil || held != e || e.Refs() != 2 {
		t.Fatalf("Get: %v, refs %d", err, e.Refs())
	}
	var a, b, c Attr
	a.Type, a.Port = TypeRoCE, 1
	MoveGRHSGIDAttr(&a, gid(9), 7, 64, 3, held) // takes the Get's reference
	if a.GRH.SGIDIndex != 1 || a.Flags != FlagGRH || e.Refs() != 2 {
		t.Fatalf("after MoveGRHSGIDAttr: %+v refs %d", a.GRH, e.Refs())
	}
	Copy(&b, &a)
	if e.Refs() != 3 || b.GRH.SGIDAttr() != e || b.GRH.DGID != gid(9) || b.Port != 1 {
		t.Fatalf("after Copy: refs %d", e.Refs())
	}
	Move(&c, &b)
	if e.Refs() != 3 || b.GRH.SGIDAttr() != nil || c.GRH.SGIDAttr() != e {
		t.Fatalf("after Move: refs %d", e.Refs())
	}
	Replace(&c, &a)
	if e.Refs() != 3 {
		t.Fatalf("after Replace onto a holder of the same entry: refs %d", e.Refs())
	}

	// Deleting the GID: pending, invisible, stale; the RoCE slot stays busy.
	if err := tab.Delete(1, 1); err != nil {
		t.Fatal(err)
	}
	if e.State() != EntryPendingDelete || e.Refs() != 2 || !a.Stale() || !c.Stale() {
		t.Fatalf("after delete: %v", e)
	}
	if _, err := tab.Get(1, 1); !errors.Is(err, ErrNoData) || !errors.Is(err, unix.ENODATA) {
		t.Fatalf("Get of a deleted slot = %v, want ENODATA", err)
	}
	if _, err := tab.Find(gid(1), ib.GIDTypeRoCEv2, ""); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("Find of a deleted GID = %v, want ENOENT", err)
	}
	if _, err := tab.Add(1, 1, gid(2), ib.GIDTypeRoCEv2, "veth0"); !errors.Is(err, unix.EBUSY) {
		t.Fatalf("Add over a referenced RoCE slot = %v, want EBUSY", err)
	}
	Destroy(&a)
	Destroy(&c)
	if e.State() != EntryFreed || e.Refs() != 0 {
		t.Fatalf("after the last Destroy: %v", e)
	}
	if _, err := tab.Add(1, 1, gid(2), ib.GIDTypeRoCEv2, "veth0"); err != nil {
		t.Fatalf("the freed slot is not reusable: %v", err)
	}
	if err := tab.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := tab.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestInfiniBandSlotFreedAtOnce(t *testing.T) {
	tab, _ := NewTable(PortSpec{Port: 1, Size: 4})
	e, _ := tab.Add(1, 0, gid(1), ib.GIDTypeIB, "")
	held, _ := tab.Get(1, 0)
	if err := tab.Delete(1, 0); err != nil {
		t.Fatal(err)
	}
	e2, err := tab.Add(1, 0, gid(2), ib.GIDTypeIB, "")
	if err != nil {
		t.Fatalf("IB slot not reusable while the old entry is held: %v", err)
	}
	held.Put() // the old entry's last reference must not clear the new one's slot
	if e.State() != EntryFreed {
		t.Fatalf("old entry %v", e)
	}
	if got, err := tab.Get(1, 0); err != nil || got != e2 {
		t.Fatalf("slot lost its new entry: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	tab := newRoCETable(t)
	if _, err := NewTable(PortSpec{Port: 0, Size: 4}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("port 0: %v", err)
	}
	if _, err := NewTable(PortSpec{Port: 1, Size: 4}, PortSpec{Port: 1, Size: 4}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("a port twice: %v", err)
	}
	for _, tt := range []struct {
		port, index uint32
	}{{0, 0}, {2, 0}, {1, 16}} {
		if _, err := tab.Get(tt.port, tt.index); !errors.Is(err, unix.EINVAL) {
			t.Errorf("Get(%d, %d) = %v, want EINVAL", tt.port, tt.index, err)
		}
		if _, err := tab.Add(tt.port, tt.index, gid(1), ib.GIDTypeRoCEv2, ""); !errors.Is(err, unix.EINVAL) {
			t.Errorf("Add(%d, %d) = %v, want EINVAL", tt.port, tt.index, err)
		}
	}
	if _, err := tab.Add(1, 0, ib.GID{}, ib.GIDTypeRoCEv2, ""); !errors.Is(err, unix.EINVAL) {
		t.Errorf("zero GID: %v", err)
	}
	if _, err := tab.FindOnPort(0, gid(1), ib.GIDTypeRoCEv2, ""); !errors.Is(err, unix.ENOENT) {
		t.Errorf("FindOnPort(0): %v", err)
	}
	if err := tab.Delete(1, 3); !errors.Is(err, unix.ENODATA) {
		t.Errorf("Delete of an empty slot: %v", err)
	}
	e, _ := tab.Add(1, 0, gid(1), ib.GIDTypeRoCEv2, "")
	e.Put() // the table's reference: the entry is freed...
	e.Put() // ...and this one is a misuse: counted, nothing else
	e.Hold()
	var le *LeakError
	if err := tab.Close(); !errors.As(err, &le) || le.Misuse != 2 {
		t.Fatalf("Close after misuse = %v", err)
	}
	if _, err := tab.Get(1, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Get on a closed table: %v", err)
	}
}

func TestFind(t *testing.T) {
	tab, _ := NewTable(PortSpec{Port: 1, Size: 8, RoCE: true}, PortSpec{Port: 2, Size: 8, RoCE: true})
	tab.Add(2, 1, gid(5), ib.GIDTypeRoCEv2, "veth1")
	tab.Add(1, 3, gid(5), ib.GIDTypeRoCEv2, "veth0")
	tab.Add(1, 2, gid(5), ib.GIDTypeRoCEv1, "veth0")
	e, err := tab.Find(gid(5), ib.GIDTypeRoCEv2, "")
	if err != nil || e.Port != 1 || e.Index != 3 {
		t.Fatalf("Find = %v, %v; want port 1 index 3 (the kernel's scan order)", e, err)
	}
	e.Put()
	if e, err := tab.Find(gid(5), ib.GIDTypeRoCEv2, "veth1"); err != nil || e.Port != 2 {
		t.Fatalf("Find with netdev = %v, %v", e, err)
	} else {
		e.Put()
	}
	if e, err := tab.FindOnPort(2, gid(5), ib.GIDTypeRoCEv1, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FindOnPort(2, v1) = %v, %v", e, err)
	}
	if got := len(tab.Entries()); got != 3 {
		t.Fatalf("Entries: %d", got)
	}
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFillUnfill(t *testing.T) {
	tab, _ := NewTable(PortSpec{Port: 1, Size: 8, RoCE: true}, PortSpec{Port: 2, Size: 8, GRHRequired: true})
	e, _ := tab.Add(1, 2, gid(1), ib.GIDTypeRoCEv2, "veth0")

	var a Attr
	a.Type, a.Port = TypeRoCE, 1
	if _, err := tab.Fill(&a); !errors.Is(err, unix.EINVAL) {
		t.Errorf("RoCE without a GRH: %v", err)
	}
	a.Flags, a.GRH.SGIDIndex = FlagGRH, 2
	old, err := tab.Fill(&a)
	if err != nil || old != nil || a.GRH.SGIDAttr() != e || e.Refs() != 2 {
		t.Fatalf("Fill: %v, refs %d", err, e.Refs())
	}
	Unfill(&a, old)
	if a.GRH.SGIDAttr() != nil || e.Refs() != 1 {
		t.Fatalf("Unfill left refs %d", e.Refs())
	}

	a.GRH.SGIDIndex = 5
	if _, err := tab.Fill(&a); !errors.Is(err, unix.ENODATA) {
		t.Errorf("empty SGID slot: %v", err)
	}
	var b Attr
	b.Type, b.Port = TypeIB, 2
	if _, err := tab.Fill(&b); !errors.Is(err, unix.EINVAL) {
		t.Errorf("GRH-required port without a GRH: %v", err)
	}
	b.Port = 3
	if _, err := tab.Fill(&b); !errors.Is(err, unix.EINVAL) {
		t.Errorf("unknown port: %v", err)
	}

	held, _ := tab.Get(1, 2)
	var c Attr
	c.Type, c.Port = TypeRoCE, 1
	MoveGRHSGIDAttr(&c, gid(9), 0, 1, 0, held)
	c.GRH.SGIDIndex = 3 // no longer matches the referenced entry
	if _, err := tab.Fill(&c); !errors.Is(err, unix.EINVAL) {
		t.Errorf("mismatched source GID entry: %v", err)
	}
	c.GRH.SGIDIndex = 2
	old, err = tab.Fill(&c)
	if err != nil || old != held || e.Refs() != 2 {
		t.Fatalf("Fill with an entry already referenced: %v refs %d", err, e.Refs())
	}
	Unfill(&c, old)
	if c.GRH.SGIDAttr() != held {
		t.Fatal("Unfill dropped the caller's own reference")
	}
	Destroy(&c)
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRace: goroutines copy, move and destroy attributes that share
// entries while GIDs are deleted and added; every count ends where it
// started. Run with -race.
func TestRace(t *testing.T) {
	tab := newRoCETable(t)
	var entries []*Entry
	for i := uint32(0); i < 4; i++ {
		e, _ := tab.Add(1, i, gid(byte(i+1)), ib.GIDTypeRoCEv2, "veth0")
		entries = append(entries, e)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var a, b, c Attr
			for i := 0; i < 2000; i++ {
				e, err := tab.Get(1, uint32((g+i)%4))
				if err != nil {
					continue
				}
				Destroy(&a)
				MoveGRHSGIDAttr(&a, gid(9), 0, 64, 0, e)
				Copy(&b, &a)
				Move(&c, &b)
				Replace(&b, &c)
				_ = a.Stale()
				Destroy(&a)
				Destroy(&b)
				Destroy(&c)
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			idx := uint32(i % 4)
			if tab.Delete(1, idx) == nil {
				for {
					if _, err := tab.Add(1, idx, gid(byte(idx+1)), ib.GIDTypeRoCEv2, "veth0"); err == nil {
						break
					}
				}
			}
		}
	}()
	wg.Wait()
	for _, e := range tab.Entries() {
		got, err := tab.Get(e.Port, e.Index)
		if err != nil || got.Refs() != 2 {
			t.Fatalf("entry %v: refs %d after the race, want the table's 1 (+1 for this Get)", e, got.Refs())
		}
		got.Put()
	}
	for _, e := range entries {
		if e.State() == EntryPendingDelete {
			t.Fatalf("deleted entry %v still referenced", e)
		}
	}
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNoCopyMarker: Attr carries a marker go vet's copylocks check sees, so
// "b := a" is reported.
func TestNoCopyMarker(t *testing.T) {
	f := reflect.TypeOf(Attr{}).Field(0)
	if _, ok := reflect.PointerTo(f.Type).MethodByName("Lock"); !ok {
		t.Fatalf("Attr's first field %s has no Lock method: go vet would not report copies", f.Type)
	}
	if testenv.InVM() {
		return // the toolchain check below runs on the host
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return
	}
	dir := t.TempDir()
	src := "package p\n\nimport \"github.com/rdmastack/rdmastack/ah\"\n\nfunc f(a *ah.Attr) { b := *a; _ = b }\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	cmd := exec.Command(gobin, "vet", filepath.Join(dir, "p.go"))
	cmd.Dir = filepath.Dir(wd) // inside the module, so the import resolves
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "copies lock value") {
		t.Fatalf("go vet did not report copying an Attr: %v\n%s", err, out)
	}
}

// TestAttrValueLayout: assign's view of an Attr has every field of it, of
// the same type at the same offset.
func TestAttrValueLayout(t *testing.T) {
	at, vt := reflect.TypeOf(Attr{}), reflect.TypeOf(attrValue{})
	if at.Size() != vt.Size() || at.NumField() != vt.NumField()+1 {
		t.Fatalf("Attr: %d bytes, %d fields; attrValue: %d bytes, %d fields", at.Size(), at.NumField(), vt.Size(), vt.NumField())
	}
	for i := range vt.NumField() {
		a, v := at.Field(i+1), vt.Field(i)
		if a.Name != v.Name || a.Type != v.Type || a.Offset != v.Offset {
			t.Errorf("field %d: Attr has %s %s at %d, attrValue %s %s at %d", i, a.Name, a.Type, a.Offset, v.Name, v.Type, v.Offset)
		}
	}
}
