package device

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// fakeSource answers as a kernel with an InfiniBand mlx5 device (index 0,
// whose uverbs GET_CHARDEV works) and an rxe device (index 3, on a kernel
// path where GET_CHARDEV is refused, so sysfs must tell).
type fakeSource struct {
	devs     []nldev.Device
	ports    map[uint32][]nldev.Port
	uverbs   map[uint32]nldev.Chardev
	umad     map[uint32]nldev.Chardev
	noRdmaCM bool
	portsErr error
	removed  map[uint32]bool // devices whose ports vanish: os.ErrNotExist
}

func (f *fakeSource) Devices() ([]nldev.Device, error) { return f.devs, nil }
func (f *fakeSource) Ports(dev uint32) ([]nldev.Port, error) {
	if f.portsErr != nil {
		return nil, f.portsErr
	}
	if f.removed[dev] {
		return nil, &nldev.Error{Op: "dump ports", Err: os.ErrNotExist}
	}
	return f.ports[dev], nil
}
func (f *fakeSource) UverbsChardev(dev uint32) (nldev.Chardev, error) {
	if ch, ok := f.uverbs[dev]; ok {
		return ch, nil
	}
	return nldev.Chardev{}, &nldev.Error{Op: "get uverbs char device", Err: unix.EOPNOTSUPP}
}
func (f *fakeSource) UmadChardev(dev, port uint32) (nldev.Chardev, error) {
	if ch, ok := f.umad[dev]; ok {
		return ch, nil
	}
	return nldev.Chardev{}, &nldev.Error{Op: "get umad char device", Err: unix.EOPNOTSUPP}
}
func (f *fakeSource) IssmChardev(dev, port uint32) (nldev.Chardev, error) {
	return nldev.Chardev{}, &nldev.Error{Op: "get issm char device", Err: unix.EOPNOTSUPP}
}
func (f *fakeSource) RdmaCMChardev() (nldev.Chardev, error) {
	if f.noRdmaCM {
		return nldev.Chardev{}, &nldev.Error{Op: "get rdma_cm char device", Err: unix.EOPNOTSUPP}
	}
	return nldev.Chardev{Type: nldev.ChardevRdmaCM, Name: "rdma_cm", Dev: unix.Mkdev(10, 58), ABI: 4}, nil
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
	fs := sysfs{root: "testdata/sysfs"}
	snap, err := list(newFake(), fs)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	uverbs0, umad0 := f.uverbs[0], f.umad[0]
	want := &Snapshot{
		Devices: []Device{
			{Index: 0, Name: "mlx5_0", NodeType: ib.NodeCA, Protocol: nldev.ProtocolIB, NodeGUID: f.devs[0].NodeGUID,
				SysImageGUID: f.devs[0].NodeGUID, FirmwareVersion: "16.35.2000", Uverbs: &uverbs0, DriverID: ib.DriverMLX5,
				HasDriverID: true, Parent: Parent{Bus: "pci", Name: "0000:00:03.0"}, SysfsPath: "testdata/sysfs/class/infiniband/mlx5_0",
				Ports: []Port{{Number: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp, LinkLayer: LinkLayerInfiniBand,
					LID: 7, SMLID: 1, SubnetPrefix: ib.GUIDFromUint64(0xfe80000000000000), Umad: &umad0}}},
			{Index: 3, Name: "rxe0", NodeType: ib.NodeCA, Protocol: nldev.ProtocolRoCE,
				Uverbs:    &nldev.Chardev{Type: nldev.ChardevUverbs, Name: "uverbs1", Dev: unix.Mkdev(231, 193), ABI: 2},
				SysfsPath: "testdata/sysfs/class/infiniband/rxe0",
				Ports: []Port{{Number: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp, LinkLayer: LinkLayerEthernet,
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
	fs := sysfs{root: "testdata/sysfs"}

	f := newFake()
	f.noRdmaCM = true
	f.removed = map[uint32]bool{3: true} // rxe0 vanishes between the dump and its port query
	snap, err := list(f, fs)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Devices) != 1 || snap.Devices[0].Name != "mlx5_0" || snap.RdmaCM != nil {
		t.Fatalf("snapshot %+v: want only mlx5_0 and no rdma_cm", snap)
	}

	f = newFake()
	f.portsErr = &nldev.Error{Op: "dump ports", Err: unix.EPERM}
	if _, err := list(f, fs); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("a port query failing with EPERM: %v", err)
	}

	// Without sysfs the link layer comes from the protocol.
	snap, err = list(newFake(), sysfs{root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if ll := snap.Devices[1].Ports[0].LinkLayer; ll != LinkLayerEthernet {
		t.Errorf("rxe0 without sysfs: link layer %v", ll)
	}
	if snap.Devices[1].Uverbs != nil || snap.Devices[0].Parent != (Parent{}) {
		t.Errorf("without sysfs: uverbs %v parent %v", snap.Devices[1].Uverbs, snap.Devices[0].Parent)
	}
}
