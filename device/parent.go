package device

import "fmt"

// DevicesByPCI returns every device whose parent is the PCI function at
// addr ("0000:03:00.0"; the domain may be left out: "03:00.0"), in index
// order: a function may carry several (a ConnectX-8's second device, a
// switchdev uplink's representors). The devices of its subfunctions sit
// on the auxiliary bus: see DevicesByAux. None is an error matching
// ErrUnknownParent.
func (s *Snapshot) DevicesByPCI(addr string) ([]Device, error) {
	if len(addr) == len("03:00.0") {
		addr = "0000:" + addr
	}
	return s.byParent("pci", addr)
}

// DevicesByAux returns every device whose parent is the auxiliary device
// name ("mlx5_core.sf.2", "mlx5_core.rdma.0"), in index order. None is an
// error matching ErrUnknownParent.
func (s *Snapshot) DevicesByAux(name string) ([]Device, error) { return s.byParent("auxiliary", name) }

func (s *Snapshot) byParent(bus, name string) ([]Device, error) {
	var out []Device
	for _, d := range s.Devices {
		if d.Parent.Bus == bus && d.Parent.Name == name {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("device: devices of %s device %s: %w", bus, name, ErrUnknownParent)
	}
	return out, nil
}
