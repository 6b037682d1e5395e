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
	"github.com/rdmastack/rdmastack/uverbs"
)

// fakeSource answers as a kernel with an InfiniBand mlx5 device (index 0,
// whose uverbs char device netlink names) and an rxe device (index 3,
// whose char device only sysfs names).
type fakeSource struct {
	devs     []nldev.Device
	ports    map[uint32][]nldev.Port
	uverbs   map[uint32]nldev.Chardev
	umad     map[uint32]nldev.Chardev
	noRdmaCM bool
	err      error
}

func (f *fakeSource) Inventory() (*nldev.Inventory, error) {
	if f.err != nil {
		return nil, f.err
	}
	inv := &nldev.Inventory{}
	for _, d := range f.devs {
		di := nldev.DeviceInventory{Device: d, Ports: f.ports[d.Index]}
		if ch, ok := f.uverbs[d.Index]; ok {
			di.Uverbs = &ch
		}
		for range di.Ports {
			var umad *nldev.Chardev
			if ch, ok := f.umad[d.Index]; ok {
				umad = &ch
			}
			di.Umad, di.Issm = append(di.Umad, umad), append(di.Issm, nil)
		}
		inv.Devices = append(inv.Devices, di)
	}
	if !f.noRdmaCM {
		inv.RdmaCM = &nldev.Chardev{Type: nldev.ChardevRdmaCM, Name: "rdma_cm", Dev: unix.Mkdev(10, 58), ABI: 4}
	}
	return inv, nil
}

func newFake() *fakeSource {
	guid := ib.GUIDFromUint64(0x0c42a10300d0f1e2)
	return &fakeSource{
		devs: []nldev.Device{
			{Index: 0, Name: "mlx5_0", Ports: 1, NodeType: ib.NodeCA, Protocol: nldev.ProtocolIB, NodeGUID: guid, SysImageGUID: guid, FirmwareVersion: "16.35.2000"},
			{Index: 3, Name: "rxe0", Ports: 1, NodeType: ib.NodeCA, Protocol: nldev.ProtocolRoCE},
		},
		ports: map[uint32][]nldev.Port{
			0: {{DevIndex: 0, DevName: "mlx5_0", Index: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp,
				IB: &nldev.IBPort{LID: 7, SMLID: 1, SubnetPrefix: ib.GUIDFromUint64(0xfe80000000000000)}}},
			3: {{DevIndex: 3, DevName: "rxe0", Index: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp, Netdev: "eth1", NetdevIndex: 4}},
		},
		uverbs: map[uint32]nldev.Chardev{0: {Type: nldev.ChardevUverbs, Name: "uverbs0", Dev: unix.Mkdev(231, 192), ABI: 1, DriverID: ib.DriverMLX5, HasDriverID: true}},
		umad:   map[uint32]nldev.Chardev{0: {Type: nldev.ChardevUmad, Name: "umad0", Dev: unix.Mkdev(231, 0), ABI: 5}},
	}
}

func TestList(t *testing.T) {
	fs := fixture("testdata/sysfs")
	snap, err := list(newFake(), fs)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	umad0 := f.umad[0]
	want := &Snapshot{
		Devices: []Device{
			{Device: uverbs.Device{Name: "mlx5_0", Index: 0, DriverID: ib.DriverMLX5, Uverbs: "uverbs0", Dev: unix.Mkdev(231, 192), ABI: 1, NodeType: ib.NodeCA},
				Protocol: nldev.ProtocolIB, NodeGUID: f.devs[0].NodeGUID,
				SysImageGUID: f.devs[0].NodeGUID, FirmwareVersion: "16.35.2000",
				Parent: Parent{Bus: "pci", Name: "0000:00:03.0"}, SysfsPath: "testdata/sysfs/class/infiniband/mlx5_0",
				Ports: []Port{{Number: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp, LinkLayer: ib.LinkLayerInfiniBand,
					LID: 7, SMLID: 1, SubnetPrefix: ib.GUIDFromUint64(0xfe80000000000000), Umad: &umad0}}},
			// Only sysfs names rxe0's char device; the driver comes from
			// the name (rxe has no bus device).
			{Device: uverbs.Device{Name: "rxe0", Index: 3, DriverID: ib.DriverRXE, Uverbs: "uverbs1", Dev: unix.Mkdev(231, 193), ABI: 2, NodeType: ib.NodeCA},
				Protocol:  nldev.ProtocolRoCE,
				SysfsPath: "testdata/sysfs/class/infiniband/rxe0",
				Ports: []Port{{Number: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp, LinkLayer: ib.LinkLayerEthernet,
					Netdev: "eth1", NetdevIndex: 4}}},
		},
		RdmaCM: &nldev.Chardev{Type: nldev.ChardevRdmaCM, Name: "rdma_cm", Dev: unix.Mkdev(10, 58), ABI: 4},
	}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Fatalf("snapshot (-want +got):\n%s", diff)
	}

	if d, ok := snap.ByName("rxe0"); !ok || d.Index != 3 {
		t.Errorf("ByName(rxe0) = %v, %v", d.Name, ok)
	}
	if d, ok := snap.ByNetdev("eth1"); !ok || d.Name != "rxe0" {
		t.Errorf("ByNetdev(eth1) = %v, %v", d.Name, ok)
	}
	for _, addr := range []string{"0000:00:03.0", "00:03.0"} {
		if d, ok := snap.ByPCI(addr); !ok || d.Name != "mlx5_0" {
			t.Errorf("ByPCI(%s) = %v, %v", addr, d.Name, ok)
		}
	}
	for _, miss := range []func() (Device, bool){
		func() (Device, bool) { return snap.ByName("nosuch") },
		func() (Device, bool) { return snap.ByNetdev("eth9") },
		func() (Device, bool) { return snap.ByPCI("0000:00:04.0") },
	} {
		if _, ok := miss(); ok {
			t.Error("a lookup found a device that is not there")
		}
	}
}

func TestListEdges(t *testing.T) {
	fs := fixture("testdata/sysfs")

	f := newFake()
	f.noRdmaCM = true
	snap, err := list(f, fs)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Devices) != 2 || snap.RdmaCM != nil {
		t.Fatalf("snapshot %+v: want both devices and no rdma_cm", snap)
	}

	f = newFake()
	f.err = &nldev.Error{Op: "dump ports", Err: unix.EPERM}
	if _, err := list(f, fs); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("an inventory failing with EPERM: %v", err)
	}

	// Without sysfs the link layer comes from the protocol.
	snap, err = list(newFake(), fixture(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if ll := snap.Devices[1].Ports[0].LinkLayer; ll != ib.LinkLayerEthernet {
		t.Errorf("rxe0 without sysfs: link layer %v", ll)
	}
	if snap.Devices[1].Device != (uverbs.Device{Name: "rxe0", Index: 3, NodeType: ib.NodeCA}) || snap.Devices[0].Parent != (Parent{}) {
		t.Errorf("without sysfs: uverbs %+v parent %v", snap.Devices[1].Device, snap.Devices[0].Parent)
	}
}

func TestSysfsDriver(t *testing.T) {
	fs := fixture("testdata/sysfs")
	for name, want := range map[string]ib.DriverID{"mlx5_0": ib.DriverMLX5, "rxe0": ib.DriverRXE, "siw_eth0": ib.DriverSIW, "foo0": ib.DriverUnknown} {
		if got := devcache.Driver(fs.FS, name); got != want {
			t.Errorf("driver(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestSnapshotVerbs(t *testing.T) {
	s := &Snapshot{Devices: []Device{
		{Device: uverbs.Device{Name: "novrb0"}},
		{Device: uverbs.Device{Name: "nonode0", Uverbs: "uverbs-test-no-such-node"}},
	}}
	if v := s.Verbs(); len(v) != 0 {
		t.Errorf("Verbs = %+v: want neither a device without a uverbs char device nor one without its node", v)
	}
}
