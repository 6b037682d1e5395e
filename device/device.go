package device

import (
	"os"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Device is one RDMA device.
type Device struct {
	// Device is what opening the device's verbs context takes: the name,
	// the RDMA netlink index, the driver id (ib.DriverUnknown when the
	// kernel does not say), the node type (whose Transport says
	// InfiniBand or iWARP) and the verbs char device,
	// /dev/infiniband/uverbsN (Uverbs "" for a device without one).
	uverbs.Device

	Protocol        nldev.Protocol
	NodeGUID        ib.GUID
	SysImageGUID    ib.GUID
	FirmwareVersion string
	Caps            nldev.DeviceCaps

	// Parent is the bus device the RDMA device belongs to; zero for
	// software devices such as rxe and siw.
	Parent Parent

	// SysfsPath is the device's directory, /sys/class/infiniband/<name>.
	SysfsPath string

	Ports []Port
}

// Parent is the bus device behind an RDMA device.
type Parent struct {
	Bus  string // "pci", "auxiliary", ...; "" when there is none
	Name string // the bus address, e.g. "0000:03:00.0" or "mlx5_core.rdma.0"
}

// Port is one port of a device.
type Port struct {
	Number    uint32
	State     ib.PortState
	PhysState ib.PhysState
	LinkLayer ib.LinkLayer

	// Netdev and NetdevIndex name the port's network device (RoCE, iWARP)
	// when it is in the caller's network namespace.
	Netdev      string
	NetdevIndex uint32

	// InfiniBand addressing; zero on Ethernet link layers.
	LID          uint32
	SMLID        uint32
	LMC          uint8
	SubnetPrefix ib.GUID

	// Umad and Issm are the port's MAD char devices; nil when the port has
	// none (RoCE ports on newer kernels).
	Umad *nldev.Chardev
	Issm *nldev.Chardev
}

// Snapshot is every RDMA device visible at one moment, with the global
// rdma_cm char device.
type Snapshot struct {
	Devices []Device
	// RdmaCM is librdmacm's char device (/dev/infiniband/rdma_cm); nil when
	// rdma_ucm is not loaded.
	RdmaCM *nldev.Chardev
}

// ByName returns the device with the given name.
func (s *Snapshot) ByName(name string) (Device, bool) {
	for _, d := range s.Devices {
		if d.Name == name {
			return d, true
		}
	}
	return Device{}, false
}

// Verbs returns the devices user space can open, as libibverbs lists
// them: those with a uverbs char device whose node exists (a container
// may see a device without its node), in the snapshot's order (by index).
func (s *Snapshot) Verbs() []Device {
	var out []Device
	for _, d := range s.Devices {
		if d.Uverbs == "" {
			continue
		}
		if _, err := os.Stat(d.Path()); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// ByNetdev returns the device one of whose ports is on the network device
// netdev itself. PortsOfNetdev also finds the port behind a VLAN, macvlan
// or bond upper and behind an IPoIB interface.
func (s *Snapshot) ByNetdev(netdev string) (Device, bool) {
	for _, d := range s.Devices {
		for _, p := range d.Ports {
			if p.Netdev == netdev {
				return d, true
			}
		}
	}
	return Device{}, false
}

// ByPCI returns the first device whose parent is the PCI function at
// addr ("0000:03:00.0"; the domain may be left out: "03:00.0").
//
// Deprecated: a PCI function may carry several devices, of which ByPCI
// returns one; use DevicesByPCI.
func (s *Snapshot) ByPCI(addr string) (Device, bool) {
	devs, err := s.DevicesByPCI(addr)
	if err != nil {
		return Device{}, false
	}
	return devs[0], true
}
