package device

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/nldev"
)

// sysFS reads the RDMA classes and the network devices of one sysfs tree
// (/sys, or a testdata tree) through the module's one reader.
type sysFS struct{ sysfs.FS }

// system is the system's sysfs.
var system = sysFS{sysfs.Sys}

func (s sysFS) devicePath(name string) string { return s.Path("class", "infiniband", name) }

func (s sysFS) read(parts ...string) (string, bool) {
	v, err := s.Read(parts...)
	return v, err == nil
}

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

// linkLayer derives a port's link layer from what netlink said: the kernel
// sends LID and the rest only for ports with the InfiniBand protocol (IB
// and OPA, link layer InfiniBand), so a port without them on a device of a
// known protocol is Ethernet (RoCE, iWARP, usNIC; a mixed mlx4 device
// included). Only kernels that name no protocol (before 5.2) cost a sysfs
// read.
func (s sysFS) linkLayer(name string, port uint32, ibPort bool, proto nldev.Protocol) ib.LinkLayer {
	switch {
	case ibPort:
		return ib.LinkLayerInfiniBand
	case proto != "":
		return ib.LinkLayerEthernet
	}
	v, ok := s.read("class", "infiniband", name, "ports", strconv.FormatUint(uint64(port), 10), "link_layer")
	if !ok {
		return ib.LinkLayerUnspecified
	}
	switch v {
	case "InfiniBand":
		return ib.LinkLayerInfiniBand
	case "Ethernet":
		return ib.LinkLayerEthernet
	}
	return ib.LinkLayerUnspecified
}

// uverbs finds the device's verbs char device in class/infiniband_verbs,
// as libibverbs does when netlink cannot tell, with the driver id guessed
// (see driver).
func (s sysFS) uverbs(name string) (nldev.Chardev, bool) {
	nodes, _ := s.List("class", "infiniband_verbs")
	for _, node := range nodes {
		if !strings.HasPrefix(node, "uverbs") {
			continue
		}
		if ibdev, ok := s.read("class", "infiniband_verbs", node, "ibdev"); !ok || ibdev != name {
			continue
		}
		ch := nldev.Chardev{Type: nldev.ChardevUverbs, Name: node, DriverID: s.driver(name)}
		if v, ok := s.read("class", "infiniband_verbs", node, "abi_version"); ok {
			ch.ABI, _ = strconv.ParseUint(v, 10, 64)
		}
		if v, ok := s.read("class", "infiniband_verbs", node, "dev"); ok {
			ch.Dev, _ = parseDev(v)
		}
		return ch, true
	}
	return nldev.Chardev{}, false
}

// driver guesses the driver id where netlink does not give it: from the
// name of the bus device's kernel driver ("mlx5_core"), else from the
// device name's prefix, as rdma-core matches rxe and siw.
func (s sysFS) driver(name string) ib.DriverID {
	if target, err := s.Link("class", "infiniband", name, "device", "driver"); err == nil {
		return driverNamed(strings.TrimSuffix(strings.TrimPrefix(target, "rdma_"), "_core"))
	}
	for _, p := range []string{"rxe", "siw"} {
		if strings.HasPrefix(name, p) {
			return driverNamed(p)
		}
	}
	return ib.DriverUnknown
}

func driverNamed(mod string) ib.DriverID {
	for id := ib.DriverID(1); id < 64; id++ {
		if id.String() == mod {
			return id
		}
	}
	return ib.DriverUnknown
}

// parseDev parses a dev attribute, "231:192", into a dev_t.
func parseDev(v string) (uint64, bool) {
	maj, min, _ := strings.Cut(v, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return unix.Mkdev(uint32(a), uint32(b)), true
}

// fixture is the sysfs tree at root (a testdata tree).
func fixture(root string) sysFS { return sysFS{sysfs.FS{Root: root}} }
