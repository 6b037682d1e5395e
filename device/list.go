package device

import (
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// source is what List asks RDMA netlink; *nldev.Client is one, tests give
// a fake.
type source interface {
	Inventory() (*nldev.Inventory, error)
}

// list joins what src and the sysfs tree say.
func list(src source, fs sysFS) (*Snapshot, error) {
	inv, err := src.Inventory()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	return join(fs, inv), nil
}

// join builds a snapshot from an inventory and sysfs.
func join(fs sysFS, inv *nldev.Inventory) *Snapshot {
	snap := &Snapshot{Devices: make([]Device, 0, len(inv.Devices)), RdmaCM: inv.RdmaCM}
	for _, nd := range inv.Devices {
		snap.Devices = append(snap.Devices, joinDevice(fs, nd))
	}
	return snap
}

// joinDevice builds one Device.
func joinDevice(fs sysFS, nd nldev.DeviceInventory) Device {
	ch := nd.Uverbs
	if ch == nil {
		// Kernels before 5.3 have no GET_CHARDEV: sysfs names the node.
		if c, ok := fs.uverbs(nd.Name); ok {
			ch = &c
		}
	}
	d := Device{
		Device: uverbs.NewDevice(nd.Device, ch), NodeType: nd.NodeType, Protocol: nd.Protocol,
		NodeGUID: nd.NodeGUID, SysImageGUID: nd.SysImageGUID, FirmwareVersion: nd.FirmwareVersion,
		Caps: nd.Caps, SysfsPath: fs.devicePath(nd.Name), Parent: fs.parent(nd.Name),
	}
	for i, np := range nd.Ports {
		p := Port{LinkLayer: fs.linkLayer(nd.Name, np.Index, np.IB != nil, nd.Protocol)}
		p.update(np)
		if i < len(nd.Umad) {
			p.Umad, p.Issm = nd.Umad[i], nd.Issm[i]
		}
		d.Ports = append(d.Ports, p)
	}
	return d
}

// update sets what netlink says of a port: all but its link layer and
// character devices.
func (p *Port) update(np nldev.Port) {
	p.Number, p.State, p.PhysState, p.Netdev, p.NetdevIndex = np.Index, np.State, np.PhysState, np.Netdev, np.NetdevIndex
	p.LID, p.SMLID, p.LMC, p.SubnetPrefix = 0, 0, 0, ib.GUID{}
	if np.IB != nil {
		p.LID, p.SMLID, p.LMC, p.SubnetPrefix = np.IB.LID, np.IB.SMLID, np.IB.LMC, np.IB.SubnetPrefix
	}
}
