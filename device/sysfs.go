package device

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// sysfs reads the RDMA classes under root (/sys, or a testdata tree).
type sysfs struct{ root string }

func (s sysfs) devicePath(name string) string {
	return filepath.Join(s.root, "class", "infiniband", name)
}

func (s sysfs) read(parts ...string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(append([]string{s.root}, parts...)...))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// parent reads class/infiniband/<name>/device, the link to the bus
// device, and that device's subsystem link, the bus: the last element of
// each link is the name (one readlink each; software devices have no
// device link).
func (s sysfs) parent(name string) Parent {
	dev := filepath.Join(s.devicePath(name), "device")
	target, err := os.Readlink(dev)
	if err != nil {
		return Parent{}
	}
	bus, err := os.Readlink(filepath.Join(dev, "subsystem"))
	if err != nil {
		return Parent{Name: filepath.Base(target)}
	}
	return Parent{Bus: filepath.Base(bus), Name: filepath.Base(target)}
}

// linkLayer derives a port's link layer from what netlink said: the kernel
// sends LID and the rest only for ports with the InfiniBand protocol (IB
// and OPA, link layer InfiniBand), so a port without them on a device of a
// known protocol is Ethernet (RoCE, iWARP, usNIC; a mixed mlx4 device
// included). Only kernels that name no protocol (before 5.2) cost a sysfs
// read.
func (s sysfs) linkLayer(name string, port uint32, ibPort bool, proto nldev.Protocol) ib.LinkLayer {
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
func (s sysfs) uverbs(name string) (nldev.Chardev, bool) {
	dirs, _ := filepath.Glob(filepath.Join(s.root, "class", "infiniband_verbs", "uverbs*"))
	for _, dir := range dirs {
		node := filepath.Base(dir)
		if ibdev, ok := s.read("class", "infiniband_verbs", node, "ibdev"); !ok || ibdev != name {
			continue
		}
		ch := nldev.Chardev{Type: nldev.ChardevUverbs, Name: node, DriverID: s.driver(name)}
		if v, ok := s.read("class", "infiniband_verbs", node, "abi_version"); ok {
			ch.ABI, _ = strconv.ParseUint(v, 10, 64)
		}
		if v, ok := s.read("class", "infiniband_verbs", node, "dev"); ok {
			maj, min, _ := strings.Cut(v, ":")
			a, err1 := strconv.ParseUint(maj, 10, 32)
			b, err2 := strconv.ParseUint(min, 10, 32)
			if err1 == nil && err2 == nil {
				ch.Dev = unix.Mkdev(uint32(a), uint32(b))
			}
		}
		return ch, true
	}
	return nldev.Chardev{}, false
}

// driver guesses the driver id where netlink does not give it: from the
// name of the bus device's kernel driver ("mlx5_core"), else from the
// device name's prefix, as rdma-core matches rxe and siw.
func (s sysfs) driver(name string) ib.DriverID {
	if target, err := os.Readlink(filepath.Join(s.devicePath(name), "device", "driver")); err == nil {
		return driverNamed(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(target), "rdma_"), "_core"))
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
