package device

import (
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev"
)

// CharDevice is a character device node through which user space reaches
// RDMA: what a container needs mounted (a Kubernetes device spec's
// container and host path, and its cgroup rule's major and minor).
type CharDevice struct {
	// Kind is the kernel client that owns it: uverbs (per device), umad
	// and issm (per port), rdma_cm (one for the system).
	Kind nldev.ChardevType
	// Name is the node's name, "uverbs0"; Path its usual path,
	// /dev/infiniband/uverbs0.
	Name, Path   string
	Major, Minor uint32
	// Port is the port of a umad or issm node; 0 for the others.
	Port uint32
}

func charDevice(kind nldev.ChardevType, name string, dev uint64, port uint32) CharDevice {
	return CharDevice{Kind: kind, Name: name, Path: filepath.Join("/dev/infiniband", name),
		Major: unix.Major(dev), Minor: unix.Minor(dev), Port: port}
}

// CharDevices returns the device's own char devices: its uverbs node,
// then each port's umad and issm nodes, those the kernel has (rdma_ucm's
// rdma_cm is the system's: see Snapshot.CharDevicesOf).
func (d Device) CharDevices() []CharDevice {
	var out []CharDevice
	if d.Uverbs != "" {
		out = append(out, charDevice(nldev.ChardevUverbs, d.Uverbs, d.Dev, 0))
	}
	for _, p := range d.Ports {
		for _, c := range []*nldev.Chardev{p.Umad, p.Issm} {
			if c != nil {
				out = append(out, charDevice(c.Type, c.Name, c.Dev, p.Number))
			}
		}
	}
	return out
}

// SystemCharDevices returns the char devices that belong to no one
// device: rdma_cm, when rdma_ucm is loaded.
func (s *Snapshot) SystemCharDevices() []CharDevice {
	if s.RdmaCM == nil {
		return nil
	}
	return []CharDevice{charDevice(nldev.ChardevRdmaCM, s.RdmaCM.Name, s.RdmaCM.Dev, 0)}
}

// CharDevicesOf returns every char device a container using d needs:
// d's own (see Device.CharDevices) and the system's (rdma_cm).
func (s *Snapshot) CharDevicesOf(d Device) []CharDevice {
	return append(d.CharDevices(), s.SystemCharDevices()...)
}
