package device

import (
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/nldev"
)

// source is what List asks RDMA netlink; *nldev.Client is one, tests give
// a fake.
type source interface {
	Inventory() (*nldev.Inventory, error)
}

// list joins what src and the sysfs tree say, afresh.
func list(src source, fs sysFS) (*Snapshot, error) {
	inv, err := src.Inventory()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	return join(fs, devcache.Join(fs.FS, inv)), nil
}

// join builds a snapshot from the cache's.
func join(fs sysFS, s *devcache.Snapshot) *Snapshot {
	snap := &Snapshot{Devices: make([]Device, 0, len(s.Devices)), RdmaCM: s.RdmaCM}
	for _, dd := range s.Devices {
		snap.Devices = append(snap.Devices, joinDevice(fs, dd))
	}
	return snap
}

// joinDevice builds one Device.
func joinDevice(fs sysFS, dd devcache.Device) Device {
	d := Device{
		Device: dd.Verbs, Protocol: dd.Protocol,
		NodeGUID: dd.NodeGUID, SysImageGUID: dd.SysImageGUID, FirmwareVersion: dd.FirmwareVersion,
		Caps: dd.Caps, SysfsPath: fs.devicePath(dd.Name), Parent: fs.parent(dd.Name),
	}
	for i, np := range dd.Ports {
		p := Port{LinkLayer: dd.LinkLayers[i]}
		p.update(np)
		if i < len(dd.Umad) {
			p.Umad, p.Issm = dd.Umad[i], dd.Issm[i]
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
