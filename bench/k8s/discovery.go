// Package k8sbench measures a Kubernetes device plugin's full discovery
// (every RDMA device, its char devices and its netdevs) done three ways:
// with rdmastack's device package, with Mellanox/rdmamap, and with
// vishvananda/netlink's RDMA functions (and rdmamap where netlink has no
// answer). It lives in a module of its own so that the library's go.mod
// never gains these two dependencies.
package k8sbench

import (
	"slices"

	"github.com/Mellanox/rdmamap"
	"github.com/vishvananda/netlink"

	"github.com/rdmastack/rdmastack/device"
)

// Found is what a discovery learns of one RDMA device: what a device
// plugin puts in a device spec (the char devices' paths) and what it
// matches its selectors against (the name, the netdevs).
type Found struct {
	Name     string
	CharDevs []string // paths: /dev/infiniband/uverbs0, …, /dev/infiniband/rdma_cm
	Netdevs  []string // the netdevs found behind the device's ports
}

// Ours is the discovery through package device: one List (which answers
// from a snapshot the kernel's events keep current), then each device's
// char devices with the system's (Snapshot.CharDevicesOf) and each port's
// netdev (Port.Netdev).
func Ours() ([]Found, error) {
	snap, err := device.List()
	if err != nil {
		return nil, err
	}
	out := make([]Found, 0, len(snap.Devices))
	for _, d := range snap.Devices {
		f := Found{Name: d.Name}
		for _, c := range snap.CharDevicesOf(d) {
			f.CharDevs = append(f.CharDevs, c.Path)
		}
		for _, p := range d.Ports {
			if p.Netdev != "" {
				f.Netdevs = append(f.Netdevs, p.Netdev)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// Rdmamap is the discovery through Mellanox/rdmamap as plugins call it:
// the device list from sysfs (GetRdmaDeviceList), each device's char
// devices (GetRdmaCharDevices: uverbs, the first umad and issm it meets,
// rdma_cm), and the netdevs by asking, for every netdev of the system,
// which device it belongs to (GetRdmaDeviceForNetdevice, rdmamap's one
// netdev lookup: it walks every device's GID table until a GID's netdev
// matches). rdmamap has no lookup from a device to its netdevs.
func Rdmamap() ([]Found, error) {
	names := rdmamap.GetRdmaDeviceList()
	out := make([]Found, len(names))
	for i, n := range names {
		out[i] = Found{Name: n, CharDevs: rdmamap.GetRdmaCharDevices(n)}
	}
	return netdevsByGID(out)
}

// Netlink is the discovery through vishvananda/netlink: the device list
// over RDMA netlink (RdmaLinkList). netlink has no request for char
// devices and does not decode a port's netdev, so a plugin built on it
// takes those from rdmamap, as Rdmamap does.
func Netlink() ([]Found, error) {
	links, err := netlink.RdmaLinkList()
	if err != nil {
		return nil, err
	}
	out := make([]Found, len(links))
	for i, l := range links {
		out[i] = Found{Name: l.Attrs.Name, CharDevs: rdmamap.GetRdmaCharDevices(l.Attrs.Name)}
	}
	return netdevsByGID(out)
}

// netdevsByGID fills in each device's netdevs: every netdev of the
// system (netlink.LinkList) that rdmamap.GetRdmaDeviceForNetdevice places
// on one of devs. A netdev with no RDMA device (lo) is skipped.
func netdevsByGID(devs []Found) ([]Found, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		name := l.Attrs().Name
		dev, err := rdmamap.GetRdmaDeviceForNetdevice(name)
		if err != nil || dev == "" {
			continue
		}
		if i := slices.IndexFunc(devs, func(f Found) bool { return f.Name == dev }); i >= 0 {
			devs[i].Netdevs = append(devs[i].Netdevs, name)
		}
	}
	return devs, nil
}
