package device

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestIntegrationListFollowsChanges: once List answers from its last
// snapshot, every change the kernel makes is in the very next List, with
// no waiting: a device added, its network device going down, coming up
// and renamed, and the device deleted. Each time List must equal an
// inventory taken afresh.
func TestIntegrationListFollowsChanges(t *testing.T) {
	testenv.RequireRDMA(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	fresh := func(t *testing.T, when string) {
		t.Helper()
		got, err := List()
		if err != nil {
			t.Fatalf("%s: List: %v", when, err)
		}
		want, err := list(nl, system)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: List differs from a fresh inventory (-fresh +List):\n%s", when, diff)
		}
	}
	fresh(t, "first")
	fresh(t, "unchanged")

	testenv.Dummy(t, "rdmstfol0", "rdmstfol1")
	ip := testenv.Oracle(t, "ip")
	if err := nl.AddLink("rxefol0", nldev.LinkRXE, "rdmstfol0"); err != nil {
		t.Fatal(err)
	}
	dev, err := nl.DeviceByName("rxefol0")
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			nl.DeleteLink(dev.Index)
		}
	})
	fresh(t, "after rdma link add")
	snap, _ := List()
	if d, ok := snap.ByName("rxefol0"); !ok || d.Ports[0].State.String() != "ACTIVE" {
		t.Fatalf("rxefol0 in List: %+v, %v; want it, its port ACTIVE", d, ok)
	}

	testenv.Run(t, ip, "link", "set", "rdmstfol0", "down")
	fresh(t, "after ip link set down")
	if d, _ := List(); mustPort(t, d, "rxefol0").State.String() == "ACTIVE" {
		t.Fatal("rxefol0's port is still ACTIVE after its netdev went down")
	}
	testenv.Run(t, ip, "link", "set", "rdmstfol0", "name", "rdmstfol1") // a netdev is renamed down
	fresh(t, "after the netdev's rename")
	testenv.Run(t, ip, "link", "set", "rdmstfol1", "up")
	fresh(t, "after ip link set up")
	if d, _ := List(); mustPort(t, d, "rxefol0").Netdev != "rdmstfol1" {
		t.Fatalf("rxefol0's port netdev is %q after the rename, want rdmstfol1", mustPort(t, d, "rxefol0").Netdev)
	}
	if err := nl.Rename(dev.Index, "rxefol1"); err != nil {
		t.Fatal(err)
	}
	fresh(t, "after rdma dev set name")

	if err := nl.DeleteLink(dev.Index); err != nil {
		t.Fatal(err)
	}
	deleted = true
	fresh(t, "after rdma link delete")
	if d, _ := List(); func() bool { _, ok := d.ByName("rxefol1"); return ok }() {
		t.Fatal("rxefol1 still listed after rdma link delete")
	}
}

// mustPort is port 1 of the named device.
func mustPort(t *testing.T, s *Snapshot, name string) Port {
	t.Helper()
	d, ok := s.ByName(name)
	if !ok || len(d.Ports) == 0 {
		t.Fatalf("%s not listed, or without ports", name)
	}
	return d.Ports[0]
}

// TestIntegrationListOwned: the caller may change what List returns
// without changing the next List.
func TestIntegrationListOwned(t *testing.T) {
	testenv.RequireRDMA(t)
	a, err := List()
	if err != nil {
		t.Fatal(err)
	}
	want, err := List()
	if err != nil {
		t.Fatal(err)
	}
	a.Devices[0].Name = "changed"
	a.Devices[0].Ports[0].Netdev = "changed"
	a.Devices[0].Uverbs = "changed"
	a.Devices = a.Devices[:0]
	b, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Fatalf("changing one snapshot changed the next (-want +got):\n%s", diff)
	}
}
