package devcache

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Device is one device of a snapshot: what RDMA netlink's inventory
// says, with the verbs char device sysfs names where netlink cannot
// (kernels before 5.3) and each port's link layer.
type Device struct {
	nldev.DeviceInventory
	// Verbs is what opening the device takes (Uverbs "" without a
	// uverbs char device).
	Verbs uverbs.Device
	// LinkLayers holds each port's link layer, in port order.
	LinkLayers []ib.LinkLayer
}

// Snapshot is every RDMA device of a network namespace at one moment.
type Snapshot struct {
	Devices []Device
	RdmaCM  *nldev.Chardev
}

// Join builds a snapshot from an inventory and the sysfs tree fs.
func Join(fs sysfs.FS, inv *nldev.Inventory) *Snapshot {
	s := &Snapshot{Devices: make([]Device, 0, len(inv.Devices)), RdmaCM: inv.RdmaCM}
	// class/infiniband_mad's nodes of each kind, read when first needed.
	mad := map[nldev.ChardevType]map[madKey]*nldev.Chardev{}
	madOf := func(typ nldev.ChardevType, name string, port uint32) *nldev.Chardev {
		if mad[typ] == nil {
			mad[typ] = madNodes(fs, typ)
		}
		return mad[typ][madKey{name, uint64(port)}]
	}
	for _, nd := range inv.Devices {
		ch := nd.Uverbs
		if ch == nil {
			// Kernels before 5.3 have no GET_CHARDEV: sysfs names the node.
			if c, ok := uverbsOf(fs, nd.Name); ok {
				ch = &c
			}
		}
		d := Device{DeviceInventory: nd, Verbs: uverbs.NewDevice(nd.Device, ch)}
		d.Uverbs = ch
		d.Umad, d.Issm = make([]*nldev.Chardev, len(nd.Ports)), make([]*nldev.Chardev, len(nd.Ports))
		copy(d.Umad, nd.Umad)
		copy(d.Issm, nd.Issm)
		for i, np := range nd.Ports {
			d.LinkLayers = append(d.LinkLayers, linkLayer(fs, nd.Name, np.Index, np.IB != nil, nd.Protocol))
			// Kernels before 5.3 have no GET_CHARDEV, and before 6.x
			// none for issm: class/infiniband_mad names the nodes.
			if d.Umad[i] == nil {
				d.Umad[i] = madOf(nldev.ChardevUmad, nd.Name, np.Index)
			}
			if d.Issm[i] == nil {
				d.Issm[i] = madOf(nldev.ChardevIssm, nd.Name, np.Index)
			}
		}
		s.Devices = append(s.Devices, d)
	}
	return s
}

// linkLayer derives a port's link layer from what netlink said: the kernel
// sends LID and the rest only for ports with the InfiniBand protocol (IB
// and OPA, link layer InfiniBand), so a port without them on a device of a
// known protocol is Ethernet (RoCE, iWARP, usNIC; a mixed mlx4 device
// included). Only kernels that name no protocol (before 5.2) cost a sysfs
// read.
func linkLayer(fs sysfs.FS, name string, port uint32, ibPort bool, proto nldev.Protocol) ib.LinkLayer {
	switch {
	case ibPort:
		return ib.LinkLayerInfiniBand
	case proto != "":
		return ib.LinkLayerEthernet
	}
	v, err := fs.Read("class", "infiniband", name, "ports", strconv.FormatUint(uint64(port), 10), "link_layer")
	if err != nil {
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

// uverbsOf finds the device's verbs char device in class/infiniband_verbs,
// as libibverbs does when netlink cannot tell, with the driver id guessed
// (see Driver).
func uverbsOf(fs sysfs.FS, name string) (nldev.Chardev, bool) {
	nodes, _ := fs.List("class", "infiniband_verbs")
	for _, node := range nodes {
		if !strings.HasPrefix(node, "uverbs") {
			continue
		}
		if ibdev, err := fs.Read("class", "infiniband_verbs", node, "ibdev"); err != nil || ibdev != name {
			continue
		}
		ch := nldev.Chardev{Type: nldev.ChardevUverbs, Name: node, DriverID: Driver(fs, name)}
		if v, err := fs.Read("class", "infiniband_verbs", node, "abi_version"); err == nil {
			ch.ABI, _ = strconv.ParseUint(v, 10, 64)
		}
		if v, err := fs.Read("class", "infiniband_verbs", node, "dev"); err == nil {
			ch.Dev, _ = parseDev(v)
		}
		return ch, true
	}
	return nldev.Chardev{}, false
}

// madKey names a port: its device's name and its number.
type madKey struct {
	dev  string
	port uint64
}

// madNodes reads class/infiniband_mad's char devices of one kind (umad
// or issm; each node's ibdev and port attributes name its port), as
// libibumad does, once for a whole snapshot: a kernel whose netlink names
// no issm node (6.1) would otherwise have each port list the class and
// read every node's attributes again, a cost that grew with the square of
// the number of devices (a node's VFs).
func madNodes(fs sysfs.FS, typ nldev.ChardevType) map[madKey]*nldev.Chardev {
	m := map[madKey]*nldev.Chardev{}
	nodes, _ := fs.List("class", "infiniband_mad")
	abi, abiErr := fs.ReadUint("class", "infiniband_mad", "abi_version")
	for _, node := range nodes {
		if !strings.HasPrefix(node, string(typ)) {
			continue
		}
		ibdev, err := fs.Read("class", "infiniband_mad", node, "ibdev")
		if err != nil {
			continue
		}
		p, err := fs.ReadUint("class", "infiniband_mad", node, "port")
		if err != nil {
			continue
		}
		k := madKey{ibdev, p}
		if m[k] != nil {
			continue // the first node of a port, as a search in order finds
		}
		ch := &nldev.Chardev{Type: typ, Name: node}
		if abiErr == nil {
			ch.ABI = abi
		}
		if v, err := fs.Read("class", "infiniband_mad", node, "dev"); err == nil {
			ch.Dev, _ = parseDev(v)
		}
		m[k] = ch
	}
	return m
}

// Driver guesses the driver id where netlink does not give it: from the
// name of the bus device's kernel driver ("mlx5_core"), else from the
// device name's prefix, as rdma-core matches rxe and siw.
func Driver(fs sysfs.FS, name string) ib.DriverID {
	if target, err := fs.Link("class", "infiniband", name, "device", "driver"); err == nil {
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

// FollowsNetdev reports whether the kernel sets the device's port state
// from its ports' network devices (rxe_net.c and siw_main.c do, on
// netdevice notifier events), so that rtnetlink's link events say when it
// may have changed.
func FollowsNetdev(driver ib.DriverID, linkLayers []ib.LinkLayer) bool {
	if driver != ib.DriverRXE && driver != ib.DriverSIW {
		return false
	}
	for _, ll := range linkLayers {
		if ll != ib.LinkLayerEthernet {
			return false
		}
	}
	return true
}
