package device

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev"
)

// source is what List asks RDMA netlink; *nldev.Client is one, tests give
// a fake.
type source interface {
	Devices() ([]nldev.Device, error)
	Ports(dev uint32) ([]nldev.Port, error)
	UverbsChardev(dev uint32) (nldev.Chardev, error)
	UmadChardev(dev, port uint32) (nldev.Chardev, error)
	IssmChardev(dev, port uint32) (nldev.Chardev, error)
	RdmaCMChardev() (nldev.Chardev, error)
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
	devs, err := src.Devices()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	snap := &Snapshot{Devices: make([]Device, 0, len(devs))}
	for _, nd := range devs {
		d, err := join(src, fs, nd)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed while we looked
		}
		if err != nil {
			return nil, fmt.Errorf("device: list %s: %w", nd.Name, err)
		}
		snap.Devices = append(snap.Devices, d)
	}
	if cm, err := src.RdmaCMChardev(); err == nil {
		snap.RdmaCM = &cm
	} else if !chardevAbsent(err) {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	return snap, nil
}

// join builds one Device.
func join(src source, fs sysfs, nd nldev.Device) (Device, error) {
	d := Device{
		Index: nd.Index, Name: nd.Name, NodeType: nd.NodeType, Protocol: nd.Protocol,
		NodeGUID: nd.NodeGUID, SysImageGUID: nd.SysImageGUID, FirmwareVersion: nd.FirmwareVersion,
		Caps: nd.Caps, SysfsPath: fs.devicePath(nd.Name),
	}
	d.Parent = fs.parent(nd.Name)

	switch ch, err := src.UverbsChardev(nd.Index); {
	case err == nil:
		d.Uverbs, d.DriverID, d.HasDriverID = &ch, ch.DriverID, ch.HasDriverID
	case chardevAbsent(err):
		// Kernels before 5.3 have no GET_CHARDEV: sysfs names the node.
		if ch, ok := fs.uverbs(nd.Name); ok {
			d.Uverbs = &ch
		}
	default:
		return Device{}, err
	}

	ports, err := src.Ports(nd.Index)
	if err != nil {
		return Device{}, err
	}
	for _, np := range ports {
		p := Port{
			Number: np.Index, State: np.State, PhysState: np.PhysState,
			Netdev: np.Netdev, NetdevIndex: np.NetdevIndex,
			LinkLayer: fs.linkLayer(nd.Name, np.Index, nd.Protocol),
		}
		if np.IB != nil {
			p.LID, p.SMLID, p.LMC, p.SubnetPrefix = np.IB.LID, np.IB.SMLID, np.IB.LMC, np.IB.SubnetPrefix
		}
		for _, mad := range []struct {
			get func(uint32, uint32) (nldev.Chardev, error)
			dst **nldev.Chardev
		}{{src.UmadChardev, &p.Umad}, {src.IssmChardev, &p.Issm}} {
			ch, err := mad.get(nd.Index, np.Index)
			switch {
			case err == nil:
				*mad.dst = &ch
			case !chardevAbsent(err):
				return Device{}, err
			}
		}
		d.Ports = append(d.Ports, p)
	}
	return d, nil
}

// chardevAbsent reports whether a GET_CHARDEV error means "no such char
// device here" (the client is not loaded, or the port has no MAD
// interface, or the kernel predates the command) rather than a failure.
func chardevAbsent(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) ||
		(errors.Is(err, unix.EINVAL) && !errors.Is(err, os.ErrNotExist))
}
