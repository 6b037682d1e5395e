package device

import "github.com/rdmastack/rdmastack/internal/sysfs"

// sysFS reads the RDMA classes and the network devices of one sysfs tree
// (/sys, or a testdata tree) through the module's one reader.
type sysFS struct{ sysfs.FS }

// system is the system's sysfs.
var system = sysFS{sysfs.Sys}

func (s sysFS) devicePath(name string) string { return s.Path("class", "infiniband", name) }

// parent reads class/infiniband/<name>/device, the link to the bus
// device, and that device's subsystem link, the bus: the last element of
// each link is the name (one readlink each; software devices have no
// device link).
func (s sysFS) parent(name string) Parent {
	target, err := s.Link("class", "infiniband", name, "device")
	if err != nil {
		return Parent{}
	}
	bus, err := s.Link("class", "infiniband", name, "device", "subsystem")
	if err != nil {
		return Parent{Name: target}
	}
	return Parent{Bus: bus, Name: target}
}

// fixture is the sysfs tree at root (a testdata tree).
func fixture(root string) sysFS { return sysFS{sysfs.FS{Root: root}} }
