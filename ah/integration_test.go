package ah

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// The VM's rxe0 sits on veth0 (10.77.0.1/24). The test gives veth0 an
// IPv6 address too, and permanent neighbours for the destinations, so the
// kernel can resolve their MACs when it creates the AHs.
const (
	dev4, dst4 = "::ffff:10.77.0.1", "::ffff:10.77.0.9"
	addr6      = "fd00:77::1"
	dev6, dst6 = "fd00:77::1", "fd00:77::9"
	dstMAC     = "02:00:00:00:00:09"
)

func openRXE0(t *testing.T) (*uverbs.Context, *Mirror) {
	t.Helper()
	testenv.RequireRDMA(t)
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		t.Fatalf("open rxe0: %v", err)
	}
	t.Cleanup(func() { ctx.Close() })
	m, err := NewMirror(ctx)
	if err != nil {
		t.Fatalf("NewMirror: %v", err)
	}
	return ctx, m
}

// sysfsGIDs reads rxe0's port 1 GID table from sysfs: index → "gid type".
func sysfsGIDs(t *testing.T) map[uint32]string {
	t.Helper()
	base := "/sys/class/infiniband/rxe0/ports/1"
	paths, _ := filepath.Glob(filepath.Join(base, "gids", "*"))
	out := map[uint32]string{}
	for _, p := range paths {
		idx, _ := strconv.Atoi(filepath.Base(p))
		b, _ := os.ReadFile(p)
		g, err := ib.ParseGID(strings.TrimSpace(string(b)))
		if err != nil || g.IsZero() {
			continue
		}
		typ, err := os.ReadFile(filepath.Join(base, "gid_attrs", "types", filepath.Base(p)))
		if err != nil {
			continue // an entry being deleted
		}
		out[uint32(idx)] = g.String() + " " + strings.TrimSpace(string(typ))
	}
	return out
}

func mirrorGIDs(m *Mirror) map[uint32]string {
	out := map[uint32]string{}
	for _, e := range m.Entries() {
		if e.Port == 1 {
			out[e.Index] = e.GID.String() + " " + e.Type.String()
		}
	}
	return out
}

// devinfoGIDs reads "GID[  i]: gid, type" lines of ibv_devinfo -v for rxe0.
func devinfoGIDs(t *testing.T) map[uint32]string {
	t.Helper()
	out := testenv.Run(t, testenv.Oracle(t, "ibv_devinfo"), "-v", "-d", "rxe0")
	re := regexp.MustCompile(`GID\[\s*(\d+)\]:\s+(\S+), (.+)$`)
	gids := map[uint32]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := re.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			idx, _ := strconv.Atoi(m[1])
			g, err := ib.ParseGID(m[2])
			if err != nil {
				t.Fatalf("ibv_devinfo GID %q: %v", m[2], err)
			}
			gids[uint32(idx)] = g.String() + " " + m[3]
		}
	}
	return gids
}

func TestIntegrationMirrorMatchesKernel(t *testing.T) {
	_, m := openRXE0(t)
	got := mirrorGIDs(m)
	if len(got) == 0 {
		t.Fatal("empty GID table")
	}
	if want := sysfsGIDs(t); fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("mirror %v, sysfs %v", got, want)
	}
	if want := devinfoGIDs(t); fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("mirror %v, ibv_devinfo %v", got, want)
	}
	for _, e := range m.Entries() {
		if e.Netdev != "veth0" {
			t.Errorf("entry %+v: want netdev veth0", e)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// waitFor refreshes the mirror until cond holds.
func waitFor(t *testing.T, m *Mirror, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, err := m.Refresh(); err != nil {
			t.Fatal(err)
		}
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen in 10s; table %v", what, mirrorGIDs(m))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustGID(t *testing.T, s string) ib.GID {
	g, err := ib.ParseGID(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestIntegrationAHsAndAddressChange creates AHs for an IPv4-mapped and
// an IPv6 RoCE v2 source GID, deletes the IPv6 address behind its
// referenced GID and follows the entry through pending-delete to freed,
// then adds the address back.
func TestIntegrationAHsAndAddressChange(t *testing.T) {
	ctx, m := openRXE0(t)
	ip := testenv.Oracle(t, "ip")
	testenv.Run(t, ip, "-6", "addr", "add", addr6+"/64", "dev", "veth0", "nodad")
	t.Cleanup(func() { exec.Command(ip, "-6", "addr", "del", addr6+"/64", "dev", "veth0").Run() })
	testenv.Run(t, ip, "neigh", "replace", "10.77.0.9", "lladdr", dstMAC, "dev", "veth0", "nud", "permanent")
	testenv.Run(t, ip, "-6", "neigh", "replace", dst6, "lladdr", dstMAC, "dev", "veth0", "nud", "permanent")
	t.Cleanup(func() {
		exec.Command(ip, "neigh", "del", "10.77.0.9", "dev", "veth0").Run()
		exec.Command(ip, "-6", "neigh", "del", dst6, "dev", "veth0").Run()
	})
	g6 := mustGID(t, dev6)
	waitFor(t, m, "the IPv6 GID", func() bool {
		e, err := m.Find(g6, ib.GIDTypeRoCEv2, "veth0")
		if err == nil {
			e.Put()
		}
		return err == nil
	})

	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pd.Close() })

	mk := func(src, dst string) (*AH, *Entry) {
		t.Helper()
		e, err := m.Find(mustGID(t, src), ib.GIDTypeRoCEv2, "veth0")
		if err != nil {
			t.Fatalf("find %s: %v", src, err)
		}
		defer e.Put()
		var a Attr
		a.Type, a.Port, a.Flags = TypeRoCE, 1, FlagGRH
		a.GRH.DGID, a.GRH.SGIDIndex, a.GRH.HopLimit = mustGID(t, dst), uint8(e.Index), 64
		refs := e.Refs()
		ah, err := CreateAH(pd, m.Table, &a)
		if err != nil {
			t.Fatalf("create AH %s -> %s: %v", src, dst, err)
		}
		if a.GRH.SGIDAttr() != nil || e.Refs() != refs+1 {
			t.Fatalf("after CreateAH: attribute owns %v, entry refs %d (was %d)", a.GRH.SGIDAttr(), e.Refs(), refs)
		}
		var q Attr
		ah.Query(&q)
		if q.GRH.DGID != a.GRH.DGID || q.GRH.SGIDAttr() != nil || q.Port != 1 {
			t.Fatalf("Query: %+v", q.GRH)
		}
		return ah, e
	}
	ah4, e4 := mk(dev4, dst4)
	ah6, e6 := mk(dev6, dst6)
	t.Cleanup(func() { ah4.Close(); ah6.Close() })
	if err := ah6.Modify(nil); !errors.Is(err, uverbs.ErrNotSupported) {
		t.Errorf("Modify = %v, want ErrNotSupported", err)
	}

	// A bad source GID index fails and leaks nothing.
	var bad Attr
	bad.Type, bad.Port, bad.Flags = TypeRoCE, 1, FlagGRH
	bad.GRH.SGIDIndex = 200
	if _, err := CreateAH(pd, m.Table, &bad); !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENODATA) {
		t.Errorf("CreateAH with SGID index 200 = %v", err)
	}

	// The address goes away: the entry is pending-delete, invisible,
	// stale, and its RoCE slot stays occupied while the AH lives.
	testenv.Run(t, ip, "-6", "addr", "del", addr6+"/64", "dev", "veth0")
	waitFor(t, m, "the IPv6 GID's deletion", func() bool { return e6.State() == EntryPendingDelete })
	if _, err := m.Get(1, e6.Index); !errors.Is(err, unix.ENODATA) {
		t.Errorf("Get of the deleted GID's slot = %v, want ENODATA", err)
	}
	if _, err := m.Find(g6, ib.GIDTypeRoCEv2, ""); !errors.Is(err, unix.ENOENT) {
		t.Errorf("Find of the deleted GID = %v, want ENOENT", err)
	}
	if !ah6.Stale() || ah4.Stale() {
		t.Errorf("stale: v6 %v (want true), v4 %v (want false)", ah6.Stale(), ah4.Stale())
	}
	if st, refs, ok := m.SlotState(1, e6.Index); !ok || st != EntryPendingDelete || refs != 1 {
		t.Errorf("slot %d: %v refs %d occupied %v; want pending-delete with the AH's reference", e6.Index, st, refs, ok)
	}
	if err := ah6.Close(); err != nil {
		t.Fatal(err)
	}
	if e6.State() != EntryFreed {
		t.Errorf("after the AH's destroy the entry is %v", e6.State())
	}
	if _, _, ok := m.SlotState(1, e6.Index); ok {
		t.Errorf("slot %d still occupied after the last reference", e6.Index)
	}

	// The address comes back: a new, valid entry.
	testenv.Run(t, ip, "-6", "addr", "add", addr6+"/64", "dev", "veth0", "nodad")
	var back *Entry
	waitFor(t, m, "the re-added IPv6 GID", func() bool {
		e, err := m.Find(g6, ib.GIDTypeRoCEv2, "veth0")
		if err != nil {
			return false
		}
		back = e
		return true
	})
	defer back.Put()
	if back == e6 || back.State() != EntryValid {
		t.Errorf("re-added GID: %v (old %v)", back, e6)
	}
	if err := ah4.Close(); err != nil || e4.State() != EntryValid || e4.Refs() != 1 {
		t.Errorf("v4 AH close: %v, entry %v", err, e4)
	}
}

// TestIntegrationWatch: the mirror follows the kernel by itself on GID
// change events.
func TestIntegrationWatch(t *testing.T) {
	_, m := openRXE0(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Watch(ctx, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Watch ended with %v", err)
		}
	})
	ip := testenv.Oracle(t, "ip")
	const addr = "fd00:78::1"
	testenv.Run(t, ip, "-6", "addr", "add", addr+"/64", "dev", "veth0", "nodad")
	t.Cleanup(func() { exec.Command(ip, "-6", "addr", "del", addr+"/64", "dev", "veth0").Run() })
	g := mustGID(t, addr)
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, err := m.Find(g, ib.GIDTypeRoCEv2, "veth0")
		if err == nil {
			e.Put()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Watch did not bring in %s: %v", addr, mirrorGIDs(m))
		}
		time.Sleep(20 * time.Millisecond)
	}
	testenv.Run(t, ip, "-6", "addr", "del", addr+"/64", "dev", "veth0")
	for {
		e, err := m.Find(g, ib.GIDTypeRoCEv2, "veth0")
		if err != nil {
			break
		}
		e.Put()
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("Watch did not drop %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
