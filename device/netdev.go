package device

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/sysfs"
)

// Via says how a network device leads to an RDMA port.
type Via uint8

// How PortsOfNetdev found a port.
const (
	// ViaPort: the network device is the port's own (RDMA netlink's
	// netdev of the port: a RoCE or iWARP port's Ethernet device).
	ViaPort Via = iota + 1
	// ViaIPoIB: the network device is an IPoIB interface of the port (its
	// hardware address holds the port's GID, as the kernel's ipoib sets
	// it; else its parent bus device and dev_port).
	ViaIPoIB
	// ViaLower: the network device is an upper of the port's own (a VLAN,
	// macvlan or bond), found through sysfs's lower_* links.
	ViaLower
	// ViaGID: the port's GID table has an entry of the network device
	// (an upper with an IP address, as rdmamap finds it).
	ViaGID
)

func (v Via) String() string {
	switch v {
	case ViaPort:
		return "port"
	case ViaIPoIB:
		return "ipoib"
	case ViaLower:
		return "lower"
	case ViaGID:
		return "gid"
	}
	return "Via(" + strconv.Itoa(int(v)) + ")"
}

// NetdevPort is an RDMA port behind a network device.
type NetdevPort struct {
	Device Device
	Port   Port
	Via    Via
}

// arphrdInfiniband is ARPHRD_INFINIBAND (include/uapi/linux/if_arp.h),
// the type of an IPoIB interface.
const arphrdInfiniband = 32

// PortsOfNetdev returns the RDMA ports behind the network device netdev:
// the port whose own network device it is; else, for an IPoIB interface,
// its port; else the ports behind its lower devices (a VLAN's or
// macvlan's one, each slave of a bond, in device index order), followed
// down to the kernel's nesting limit; else
// the ports whose GID tables hold an entry of it. A network device with
// no RDMA port behind it, or none of that name, is an error matching
// ErrUnknownNetdev.
//
// It reads sysfs (class/net and the GID tables) as it is now, the
// snapshot's devices as they were when it was taken.
func (s *Snapshot) PortsOfNetdev(netdev string) ([]NetdevPort, error) {
	return portsOfNetdev(system, s, netdev)
}

func portsOfNetdev(fs sysFS, s *Snapshot, netdev string) ([]NetdevPort, error) {
	out := resolveNetdev(fs, s, netdev, 0)
	if len(out) == 0 {
		return nil, fmt.Errorf("device: ports of netdev %s: %w", netdev, ErrUnknownNetdev)
	}
	return out, nil
}

// maxLowerDepth bounds the walk down lower links (the kernel's own
// limit on nested devices is 8, MAX_NEST_DEV).
const maxLowerDepth = 8

func resolveNetdev(fs sysFS, s *Snapshot, netdev string, depth int) []NetdevPort {
	if netdev == "" || strings.ContainsAny(netdev, "/") || netdev == "." || netdev == ".." {
		return nil
	}
	var out []NetdevPort
	for _, d := range s.Devices {
		for _, p := range d.Ports {
			if p.Netdev == netdev {
				out = append(out, NetdevPort{Device: d, Port: p, Via: ViaPort})
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if typ, err := fs.ReadUint("class", "net", netdev, "type"); err == nil && typ == arphrdInfiniband {
		if out = ipoibPorts(fs, s, netdev); len(out) > 0 {
			return out
		}
	}
	if depth < maxLowerDepth {
		names, _ := fs.List("class", "net", netdev)
		for _, n := range names {
			lower, ok := strings.CutPrefix(n, "lower_")
			if !ok {
				continue
			}
			for _, np := range resolveNetdev(fs, s, lower, depth+1) {
				if np.Via == ViaPort || np.Via == ViaIPoIB {
					np.Via = ViaLower
				}
				if !slices.ContainsFunc(out, func(o NetdevPort) bool { return samePort(o, np) }) {
					out = append(out, np)
				}
			}
		}
		if len(out) > 0 {
			slices.SortFunc(out, func(a, b NetdevPort) int {
				return cmp.Or(cmp.Compare(a.Device.Index, b.Device.Index), cmp.Compare(a.Port.Number, b.Port.Number))
			})
			return out
		}
	}
	if depth > 0 {
		return nil // the GID tables are searched once, for the device asked for
	}
	return gidPorts(fs, s, netdev)
}

func samePort(a, b NetdevPort) bool {
	return a.Device.Index == b.Device.Index && a.Port.Number == b.Port.Number
}

// ipoibPorts finds the port of an IPoIB interface. The kernel's ipoib
// sets the interface's hardware address to its QPN (4 bytes) and the
// port's GID (16 bytes), and its dev_port (and dev_id) to the port
// number less one, its device link to the RDMA device's parent; a child
// interface (a P_Key) has its parent's. The GID is looked up in index 0
// of each InfiniBand port (the port GID); where it matches none, the
// parent and dev_port (dev_id on kernels without dev_port) choose.
func ipoibPorts(fs sysFS, s *Snapshot, netdev string) []NetdevPort {
	var out []NetdevPort
	if addr, err := fs.Read("class", "net", netdev, "address"); err == nil {
		if b, err := hex.DecodeString(strings.ReplaceAll(addr, ":", "")); err == nil && len(b) == 20 {
			gid := ib.GID(b[4:])
			for _, d := range s.Devices {
				for _, p := range d.Ports {
					if p.LinkLayer != ib.LinkLayerInfiniBand {
						continue
					}
					if g, err := fs.Read("class", "infiniband", d.Name, "ports", strconv.FormatUint(uint64(p.Number), 10), "gids", "0"); err == nil {
						if pg, err := sysfs.ParseGID(g); err == nil && ib.GID(pg) == gid {
							out = append(out, NetdevPort{Device: d, Port: p, Via: ViaIPoIB})
						}
					}
				}
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	parent, err := fs.Link("class", "net", netdev, "device")
	if err != nil {
		return nil
	}
	// Kernels before 3.15 have no dev_port, only dev_id (in hex); like
	// NVIDIA's ibdev2netdev, take the larger.
	port := uint64(0)
	if v, err := fs.ReadUint("class", "net", netdev, "dev_port"); err == nil {
		port = v
	}
	if v, err := fs.Read("class", "net", netdev, "dev_id"); err == nil {
		if id, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 32); err == nil && id > port {
			port = id
		}
	}
	port++
	for _, d := range s.Devices {
		if d.Parent.Name != parent {
			continue
		}
		for _, p := range d.Ports {
			if uint64(p.Number) == port && p.LinkLayer == ib.LinkLayerInfiniBand {
				out = append(out, NetdevPort{Device: d, Port: p, Via: ViaIPoIB})
			}
		}
	}
	return out
}

// gidPorts finds the ports whose GID tables have an entry of netdev
// (gid_attrs/ndevs/I), as rdmamap does.
func gidPorts(fs sysFS, s *Snapshot, netdev string) []NetdevPort {
	var out []NetdevPort
	for _, d := range s.Devices {
		for _, p := range d.Ports {
			if p.LinkLayer != ib.LinkLayerEthernet {
				continue
			}
			dir := []string{"class", "infiniband", d.Name, "ports", strconv.FormatUint(uint64(p.Number), 10), "gid_attrs", "ndevs"}
			idx, _ := fs.List(dir...)
			for _, i := range idx {
				if nd, err := fs.Read(append(dir, i)...); err == nil && nd == netdev {
					out = append(out, NetdevPort{Device: d, Port: p, Via: ViaGID})
					break
				}
			}
		}
	}
	return out
}
