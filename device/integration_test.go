package device

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestIntegrationListMatchesIproute2AndSysfs checks List against
// "rdma -j dev", "rdma -j link" and sysfs, device by device.
func TestIntegrationListMatchesIproute2AndSysfs(t *testing.T) {
	testenv.RequireRDMA(t)
	snap, err := List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	rdma := testenv.Oracle(t, "rdma")
	var devs, links []map[string]any
	if err := json.Unmarshal(testenv.Run(t, rdma, "-j", "dev"), &devs); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(testenv.Run(t, rdma, "-j", "link"), &links); err != nil {
		t.Fatal(err)
	}
	if n := os.Getenv("RDMASTACK_VM_DEVICES"); n != "" && itoa(len(snap.Devices)) != n {
		t.Fatalf("List has %d devices, the VM made %s", len(snap.Devices), n)
	}
	if len(devs) != len(snap.Devices) {
		t.Fatalf("iproute2 lists %d devices, List %d", len(devs), len(snap.Devices))
	}
	var ourDevs, ourLinks []map[string]any
	for _, d := range snap.Devices {
		ourDevs = append(ourDevs, map[string]any{
			"ifindex": float64(d.Index), "ifname": d.Name, "node_type": d.NodeType.String(),
			"node_guid": d.NodeGUID.String(), "sys_image_guid": d.SysImageGUID.String(),
		})
		for _, p := range d.Ports {
			ourLinks = append(ourLinks, map[string]any{
				"ifindex": float64(d.Index), "ifname": d.Name, "port": float64(p.Number),
				"state": p.State.String(), "physical_state": p.PhysState.String(),
				"netdev": p.Netdev, "netdev_index": float64(p.NetdevIndex),
			})
		}
		checkSysfs(t, d)
	}
	for _, m := range devs {
		delete(m, "fw")       // rxe reports none; we check it against sysfs below
		delete(m, "protocol") // absent from iproute2 before 6.5
	}
	if diff := cmp.Diff(devs, ourDevs); diff != "" {
		t.Errorf("devices differ from iproute2 (-iproute2 +ours):\n%s", diff)
	}
	if diff := cmp.Diff(links, ourLinks); diff != "" {
		t.Errorf("ports differ from iproute2 (-iproute2 +ours):\n%s", diff)
	}
	if snap.RdmaCM == nil || snap.RdmaCM.Name != "rdma_cm" {
		t.Errorf("rdma_cm char device %+v", snap.RdmaCM)
	}
}

// checkSysfs compares one device with its sysfs directory.
func checkSysfs(t *testing.T, d Device) {
	t.Helper()
	read := func(parts ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{d.SysfsPath}, parts...)...))
		if err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		return strings.TrimSpace(string(b))
	}
	if g := read("node_guid"); g != d.NodeGUID.String() {
		t.Errorf("%s: sysfs node_guid %s, List %s", d.Name, g, d.NodeGUID)
	}
	if fw := read("fw_ver"); fw != d.FirmwareVersion {
		t.Errorf("%s: sysfs fw_ver %q, List %q", d.Name, fw, d.FirmwareVersion)
	}
	if d.Uverbs == "" || d.DriverID != ib.DriverRXE {
		t.Fatalf("%s: uverbs %+v driver %v", d.Name, d.Device, d.DriverID)
	}
	var st unix.Stat_t
	if err := unix.Stat(d.Path(), &st); err != nil || st.Rdev != d.Dev {
		t.Errorf("%s: %s: %v (rdev %d, List %d)", d.Name, d.Path(), err, st.Rdev, d.Dev)
	}
	if d.Parent != (Parent{}) {
		t.Errorf("%s: an rxe device has no bus parent, List says %+v", d.Name, d.Parent)
	}
	for _, p := range d.Ports {
		port := itoa(int(p.Number))
		if ll := read("ports", port, "link_layer"); ll != p.LinkLayer.String() || p.LinkLayer != ib.LinkLayerEthernet {
			t.Errorf("%s/%s: sysfs link layer %q, List %v", d.Name, port, ll, p.LinkLayer)
		}
		if nd := read("ports", port, "gid_attrs", "ndevs", "0"); nd != p.Netdev {
			t.Errorf("%s/%s: sysfs netdev %q, List %q", d.Name, port, nd, p.Netdev)
		}
		if st := read("ports", port, "state"); !strings.HasSuffix(st, p.State.String()) {
			t.Errorf("%s/%s: sysfs state %q, List %v", d.Name, port, st, p.State)
		}
		if p.Umad != nil {
			var st unix.Stat_t
			if err := unix.Stat(p.Umad.Path(), &st); err != nil || st.Rdev != p.Umad.Dev {
				t.Errorf("%s/%s: %s: %v", d.Name, port, p.Umad.Path(), err)
			}
		}
	}
}

// TestIntegrationListEmptyNamespace: a namespace that sees no device (exclusive
// mode) gets an empty snapshot, not an error.
func TestIntegrationListEmptyNamespace(t *testing.T) {
	// List joins the netlink view of the namespace first: in a namespace
	// that sees no device, the snapshot is empty.
	rxetest.ExclusiveNetns(t, "rdmstdevns")
	f, err := os.Open("/run/netns/rdmstdevns")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	there, err := nldev.DialNetNS(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer there.Close()
	snap, err := list(there, system)
	if err != nil || len(snap.Devices) != 0 {
		t.Fatalf("exclusive mode, new namespace: %d devices, %v; want an empty snapshot", len(snap.Devices), err)
	}
}

func itoa(n int) string {
	if n >= 10 {
		return itoa(n/10) + string(rune('0'+n%10))
	}
	return string(rune('0' + n))
}

// TestIntegrationOpen opens every listed device and checks the context
// describes the same device.
func TestIntegrationOpen(t *testing.T) {
	testenv.RequireRDMA(t)
	snap, err := List()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.Devices {
		ctx, err := d.Open()
		if err != nil {
			t.Fatalf("%s: Open: %v", d.Name, err)
		}
		attr, err := ctx.QueryDevice()
		if err != nil || attr.NodeGUID != d.NodeGUID || int(attr.PhysPortCount) != len(d.Ports) {
			t.Errorf("%s: query device %+v, %v", d.Name, attr, err)
		}
		if err := ctx.Close(); err != nil {
			t.Errorf("%s: Close: %v", d.Name, err)
		}
	}
	var none Device
	none.Name = "nouverbs0"
	if _, err := none.Open(); !errors.Is(err, unix.ENODEV) {
		t.Errorf("Open of a device without uverbs = %v, want ENODEV", err)
	}
}
