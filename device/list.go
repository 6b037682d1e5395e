package device

import (
	"fmt"

	"github.com/rdmastack/rdmastack/nldev"
)

// source is what List asks RDMA netlink; *nldev.Client is one, tests give
// a fake.
type source interface {
	Inventory() (*nldev.Inventory, error)
}

// List returns a snapshot of every RDMA device visible in the caller's
// network namespace. A kernel without RDMA gives an error matching
// nldev.ErrNoRDMA; no devices at all is an empty snapshot.
func List() (*Snapshot, error) {
	c, err := nldev.Dial()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	defer c.Close()
	return list(c, sysfs{root: "/sys"})
}

// list joins what src and the sysfs tree say.
func list(src source, fs sysfs) (*Snapshot, error) {
	inv, err := src.Inventory()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	snap := &Snapshot{Devices: make([]Device, 0, len(inv.Devices)), RdmaCM: inv.RdmaCM}
	for _, nd := range inv.Devices {
		snap.Devices = append(snap.Devices, join(fs, nd))
	}
	return snap, nil
}

// join builds one Device.
func join(fs sysfs, nd nldev.DeviceInventory) Device {
	d := Device{
		Index: nd.Index, Name: nd.Name, NodeType: nd.NodeType, Protocol: nd.Protocol,
		NodeGUID: nd.NodeGUID, SysImageGUID: nd.SysImageGUID, FirmwareVersion: nd.FirmwareVersion,
		Caps: nd.Caps, SysfsPath: fs.devicePath(nd.Name), Parent: fs.parent(nd.Name),
	}
	switch {
	case nd.Uverbs != nil:
		d.Uverbs, d.DriverID, d.HasDriverID = nd.Uverbs, nd.Uverbs.DriverID, nd.Uverbs.HasDriverID
	default:
		// Kernels before 5.3 have no GET_CHARDEV: sysfs names the node.
		if ch, ok := fs.uverbs(nd.Name); ok {
			d.Uverbs = &ch
		}
	}
	for i, np := range nd.Ports {
		p := Port{
			Number: np.Index, State: np.State, PhysState: np.PhysState,
			Netdev: np.Netdev, NetdevIndex: np.NetdevIndex,
			LinkLayer: fs.linkLayer(nd.Name, np.Index, np.IB != nil, nd.Protocol),
		}
		if np.IB != nil {
			p.LID, p.SMLID, p.LMC, p.SubnetPrefix = np.IB.LID, np.IB.SMLID, np.IB.LMC, np.IB.SubnetPrefix
		}
		if i < len(nd.Umad) {
			p.Umad, p.Issm = nd.Umad[i], nd.Issm[i]
		}
		d.Ports = append(d.Ports, p)
	}
	return d
}
