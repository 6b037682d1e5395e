package device

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/nldev"
)

// connectX is a kernel as testdata/connectx shows it: a ConnectX PCI
// function 0000:03:00.0 with two RDMA devices (mlx5_0 on Ethernet, eth0;
// mlx5_1 on InfiniBand, with IPoIB ib0 and its child ib0.8001) and a
// subfunction, mlx5_core.sf.2 on the auxiliary bus, with mlx5_2 on
// enp3s0f0s2. Above eth0 sit a VLAN (eth0.7), a macvlan (mv0) and a bond
// (bond0, over eth0 and enp3s0f0s2); ipvl0 is named only by mlx5_0's GID
// table.
func connectX(t *testing.T) *Snapshot {
	t.Helper()
	uv := func(n uint32) *nldev.Chardev {
		return &nldev.Chardev{Type: nldev.ChardevUverbs, Name: "uverbs" + itoa(int(n)), Dev: unix.Mkdev(231, 192+n), ABI: 1, DriverID: ib.DriverMLX5, HasDriverID: true}
	}
	umad := func(n uint32) *nldev.Chardev {
		return &nldev.Chardev{Type: nldev.ChardevUmad, Name: "umad" + itoa(int(n)), Dev: unix.Mkdev(231, n), ABI: 5}
	}
	eth := func(dev uint32, name, netdev string, ifindex uint32) nldev.DeviceInventory {
		return nldev.DeviceInventory{
			Device: nldev.Device{Index: dev, Name: name, Ports: 1, NodeType: ib.NodeCA, Protocol: nldev.ProtocolRoCE},
			Ports:  []nldev.Port{{DevIndex: dev, DevName: name, Index: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp, Netdev: netdev, NetdevIndex: ifindex}},
			Uverbs: uv(dev), Umad: []*nldev.Chardev{umad(dev)}, Issm: []*nldev.Chardev{nil},
		}
	}
	inv := &nldev.Inventory{
		Devices: []nldev.DeviceInventory{
			eth(0, "mlx5_0", "eth0", 2),
			{
				Device: nldev.Device{Index: 1, Name: "mlx5_1", Ports: 1, NodeType: ib.NodeCA, Protocol: nldev.ProtocolIB},
				Ports: []nldev.Port{{DevIndex: 1, DevName: "mlx5_1", Index: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp,
					IB: &nldev.IBPort{LID: 3, SMLID: 1, SubnetPrefix: ib.GUIDFromUint64(0xfe80000000000000)}}},
				// No issm from netlink (Linux 6.1 has no GET_CHARDEV for
				// it): class/infiniband_mad names it.
				Uverbs: uv(1), Umad: []*nldev.Chardev{umad(1)}, Issm: []*nldev.Chardev{nil},
			},
			eth(2, "mlx5_2", "enp3s0f0s2", 5),
		},
		RdmaCM: &nldev.Chardev{Type: nldev.ChardevRdmaCM, Name: "rdma_cm", Dev: unix.Mkdev(10, 58), ABI: 4},
	}
	fs := fixture("testdata/connectx")
	return join(fs, devcache.Join(fs.FS, inv))
}

func names(devs []Device) []string {
	var out []string
	for _, d := range devs {
		out = append(out, d.Name)
	}
	return out
}

// TestDevicesByParent: a PCI function's every device, in index order,
// whether asked with or without the domain; a subfunction's device on
// the auxiliary bus; an unknown parent is ErrUnknownParent (and
// os.ErrNotExist); ByPCI still answers the first.
func TestDevicesByParent(t *testing.T) {
	snap := connectX(t)
	for _, addr := range []string{"0000:03:00.0", "03:00.0"} {
		devs, err := snap.DevicesByPCI(addr)
		if err != nil || !cmp.Equal(names(devs), []string{"mlx5_0", "mlx5_1"}) {
			t.Errorf("DevicesByPCI(%s) = %v, %v; want mlx5_0 and mlx5_1", addr, names(devs), err)
		}
	}
	if d, ok := snap.ByPCI("03:00.0"); !ok || d.Name != "mlx5_0" {
		t.Errorf("ByPCI(03:00.0) = %s, %v", d.Name, ok)
	}
	devs, err := snap.DevicesByAux("mlx5_core.sf.2")
	if err != nil || !cmp.Equal(names(devs), []string{"mlx5_2"}) {
		t.Fatalf("DevicesByAux(mlx5_core.sf.2) = %v, %v", names(devs), err)
	}
	if p := devs[0].Parent; p != (Parent{Bus: "auxiliary", Name: "mlx5_core.sf.2"}) {
		t.Errorf("mlx5_2's parent %+v", p)
	}
	for _, miss := range []func() ([]Device, error){
		func() ([]Device, error) { return snap.DevicesByPCI("0000:04:00.0") },
		func() ([]Device, error) { return snap.DevicesByAux("mlx5_core.sf.9") },
		// A subfunction's PCI function is not its parent.
		func() ([]Device, error) { return snap.DevicesByAux("0000:03:00.0") },
		func() ([]Device, error) { return snap.DevicesByPCI("mlx5_core.sf.2") },
	} {
		devs, err := miss()
		if !errors.Is(err, ErrUnknownParent) || !errors.Is(err, os.ErrNotExist) || devs != nil {
			t.Errorf("an unknown parent gave %v, %v", names(devs), err)
		}
	}
}

// TestPortsOfNetdev resolves every kind of network device of the
// fixture to its ports and says how.
func TestPortsOfNetdev(t *testing.T) {
	snap := connectX(t)
	fs := fixture("testdata/connectx")
	type hit struct {
		Dev  string
		Port uint32
		Via  string
	}
	for _, tc := range []struct {
		netdev string
		want   []hit
	}{
		{"eth0", []hit{{"mlx5_0", 1, "port"}}},
		{"enp3s0f0s2", []hit{{"mlx5_2", 1, "port"}}},
		{"eth0.7", []hit{{"mlx5_0", 1, "lower"}}},
		{"mv0", []hit{{"mlx5_0", 1, "lower"}}},
		{"bond0", []hit{{"mlx5_0", 1, "lower"}, {"mlx5_2", 1, "lower"}}},
		{"ipvl0", []hit{{"mlx5_0", 1, "gid"}}},
		{"ib0", []hit{{"mlx5_1", 1, "ipoib"}}},
		{"ib0.8001", []hit{{"mlx5_1", 1, "ipoib"}}},
	} {
		got, err := portsOfNetdev(fs, snap, tc.netdev)
		if err != nil {
			t.Errorf("PortsOfNetdev(%s): %v", tc.netdev, err)
			continue
		}
		var hits []hit
		for _, np := range got {
			hits = append(hits, hit{np.Device.Name, np.Port.Number, np.Via.String()})
		}
		if diff := cmp.Diff(tc.want, hits); diff != "" {
			t.Errorf("PortsOfNetdev(%s) (-want +got):\n%s", tc.netdev, diff)
		}
	}
	for _, bad := range []string{"lo", "nosuch0", "", "..", "../../bus"} {
		got, err := portsOfNetdev(fs, snap, bad)
		if !errors.Is(err, ErrUnknownNetdev) || !errors.Is(err, os.ErrNotExist) || got != nil {
			t.Errorf("PortsOfNetdev(%q) = %v, %v; want ErrUnknownNetdev", bad, got, err)
		}
	}
}

// TestIPoIBByParent: an IPoIB interface whose address matches no port GID
// (a port GID changed, a fixture without gids) is placed by its parent
// device and dev_port.
func TestIPoIBByParent(t *testing.T) {
	snap := connectX(t)
	snap.Devices[1].Name = "renamed" // no sysfs directory: no GID to match
	got, err := portsOfNetdev(fixture("testdata/connectx"), snap, "ib0")
	if err != nil || len(got) != 1 || got[0].Device.Index != 1 || got[0].Port.Number != 1 || got[0].Via != ViaIPoIB {
		t.Fatalf("ib0 by parent and dev_port: %+v, %v", got, err)
	}
	// A second port's interface, on a kernel that sets only dev_id: no
	// such port on mlx5_1, and mlx5_0's port is Ethernet.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/connectx")); err != nil {
		t.Fatal(err)
	}
	ib1 := dir + "/devices/pci0000:00/0000:00:02.0/0000:03:00.0/net/ib0"
	if err := os.Remove(ib1 + "/dev_port"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ib1+"/dev_id", []byte("0x1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := portsOfNetdev(fixture(dir), snap, "ib0"); !errors.Is(err, ErrUnknownNetdev) {
		t.Errorf("ib0 on port 2 by dev_id: %+v, %v; want ErrUnknownNetdev", got, err)
	}
}

// TestCharDevices lists what a device spec mounts for each device, with
// rdma_cm once for the system; mlx5_1's issm node comes from sysfs.
func TestCharDevices(t *testing.T) {
	snap := connectX(t)
	d, _ := snap.ByName("mlx5_1")
	want := []CharDevice{
		{Kind: nldev.ChardevUverbs, Name: "uverbs1", Path: "/dev/infiniband/uverbs1", Major: 231, Minor: 193},
		{Kind: nldev.ChardevUmad, Name: "umad1", Path: "/dev/infiniband/umad1", Major: 231, Minor: 1, Port: 1},
		{Kind: nldev.ChardevIssm, Name: "issm1", Path: "/dev/infiniband/issm1", Major: 231, Minor: 65, Port: 1},
		{Kind: nldev.ChardevRdmaCM, Name: "rdma_cm", Path: "/dev/infiniband/rdma_cm", Major: 10, Minor: 58},
	}
	if diff := cmp.Diff(want, snap.CharDevicesOf(d)); diff != "" {
		t.Errorf("CharDevicesOf(mlx5_1) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:3], d.CharDevices()); diff != "" {
		t.Errorf("mlx5_1.CharDevices (-want +got):\n%s", diff)
	}
	if got := want[3].Kind.String(); got != "rdma_cm" {
		t.Errorf("kind %q", got)
	}
	snap.RdmaCM = nil
	if got := snap.SystemCharDevices(); got != nil {
		t.Errorf("without rdma_ucm: %+v", got)
	}
	if got := (Device{}).CharDevices(); got != nil {
		t.Errorf("a device without char devices: %+v", got)
	}
}

// TestPortCounters reads the PMA set and the hw counters as numbers,
// leaving out a counter the driver cannot read and hw_counters' lifespan
// setting.
func TestPortCounters(t *testing.T) {
	snap := connectX(t)
	d, _ := snap.ByName("mlx5_0")
	pc, err := d.PortCounters(1)
	if err != nil {
		t.Fatal(err)
	}
	want := PortCounters{Port: 1,
		PMA: Counters{{"link_downed", 1}, {"port_rcv_data", 81920}, {"port_rcv_packets", 640}, {"port_xmit_data", 40960}, {"port_xmit_packets", 320}, {"symbol_error", 0}},
		HW:  Counters{{"out_of_buffer", 3}, {"rx_write_requests", 17}},
	}
	if diff := cmp.Diff(want, pc); diff != "" {
		t.Errorf("PortCounters (-want +got):\n%s", diff)
	}
	if v, ok := pc.PMA.Get("port_xmit_data"); !ok || v != 40960 {
		t.Errorf("Get(port_xmit_data) = %d, %v", v, ok)
	}
	if _, ok := pc.PMA.Get("nosuch"); ok {
		t.Error("Get found a counter that is not there")
	}
	if diff := cmp.Diff(Counters{{"roce_adp_retrans", 2}}, d.HWCounters()); diff != "" {
		t.Errorf("HWCounters (-want +got):\n%s", diff)
	}
	d, _ = snap.ByName("mlx5_1")
	pc, err = d.PortCounters(1)
	if err != nil || !cmp.Equal(pc.PMA, Counters{{"port_xmit_data", 100}, {"symbol_error", 2}}) || pc.HW != nil {
		t.Errorf("mlx5_1 port 1: %+v, %v", pc, err)
	}
	if _, err := d.PortCounters(2); !errors.Is(err, ErrUnknownPort) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("port 2 of a one-port device: %v", err)
	}
}

// TestViaString names every way and an unknown one.
func TestViaString(t *testing.T) {
	for v, want := range map[Via]string{ViaPort: "port", ViaIPoIB: "ipoib", ViaLower: "lower", ViaGID: "gid", 0: "Via(0)"} {
		if got := v.String(); got != want {
			t.Errorf("%d: %q, want %q", v, got, want)
		}
	}
}
