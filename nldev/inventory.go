package nldev

import (
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Inventory is every device with its ports and char devices, gathered with
// one GET dump and one batch of doits (see Client.Inventory).
type Inventory struct {
	Devices []DeviceInventory
	// RdmaCM is the global rdma_cm char device; nil when its client
	// (rdma_ucm) is not loaded.
	RdmaCM *Chardev
}

// DeviceInventory is one device of an Inventory.
type DeviceInventory struct {
	Device
	Ports []Port
	// Uverbs is the verbs char device; nil for a device without one.
	Uverbs *Chardev
	// Umad and Issm hold each port's MAD char devices (index 0 is port 1);
	// nil entries for ports without them.
	Umad, Issm []*Chardev
}

// Inventory lists every device of the caller's network namespace with its
// ports and char devices. Where a device is asked about port by port and
// char device by char device, this sends the questions for all of them
// together (several requests to a datagram), which costs a fraction of the
// round trips. A device removed meanwhile is left out.
func (c *Client) Inventory() (*Inventory, error) {
	devs, err := c.Devices()
	if err != nil {
		return nil, err
	}
	reqs := portRequests(devs)
	nports := len(reqs)
	for _, d := range devs {
		idx := d.Index
		reqs = append(reqs, chardevRequest(ChardevUverbs, &idx, 0))
		for p := uint32(1); p <= d.Ports; p++ {
			reqs = append(reqs, chardevRequest(ChardevUmad, &idx, p), chardevRequest(ChardevIssm, &idx, p))
		}
	}
	reqs = append(reqs, chardevRequest(ChardevRdmaCM, nil, 0))
	res := c.batch(reqs)
	ports, err := portResults(devs, res[:nports])
	if err != nil {
		return nil, err
	}
	res = res[nports:]

	inv := &Inventory{}
	next := func() result { r := res[0]; res = res[1:]; return r }
	for i, d := range devs {
		di := DeviceInventory{Device: d, Ports: ports[i]}
		var err error
		if di.Uverbs, err = chardevResult(ChardevUverbs, next()); err != nil {
			return nil, err
		}
		for p := uint32(1); p <= d.Ports; p++ {
			umad, err1 := chardevResult(ChardevUmad, next())
			issm, err2 := chardevResult(ChardevIssm, next())
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			di.Umad, di.Issm = append(di.Umad, umad), append(di.Issm, issm)
		}
		if ports[i] != nil || d.Ports == 0 {
			inv.Devices = append(inv.Devices, di)
		}
	}
	cm, err := chardevResult(ChardevRdmaCM, next())
	if err != nil {
		return nil, err
	}
	inv.RdmaCM = cm
	return inv, nil
}

// PortsOf returns the ports of each of devs (as Devices listed them), in
// one batch of requests. If any device is gone the error matches
// os.ErrNotExist.
func (c *Client) PortsOf(devs []Device) ([][]Port, error) {
	ports, err := portResults(devs, c.batch(portRequests(devs)))
	if err != nil {
		return nil, err
	}
	for i, d := range devs {
		if ports[i] == nil && d.Ports > 0 {
			return nil, &Error{Op: fmt.Sprintf("get ports of device %d", d.Index), Err: fmt.Errorf("%w: %w", os.ErrNotExist, unix.ENODEV)}
		}
	}
	return ports, nil
}

// portRequests is one PORT_GET doit per port of every device.
func portRequests(devs []Device) []request {
	var reqs []request
	for _, d := range devs {
		for p := uint32(1); p <= d.Ports; p++ {
			reqs = append(reqs, portRequest(d.Index, p))
		}
	}
	return reqs
}

// portResults decodes the answers to portRequests(devs): each device's
// ports, nil for a device the kernel no longer knows (EINVAL).
func portResults(devs []Device, res []result) ([][]Port, error) {
	out := make([][]Port, len(devs))
	for i, d := range devs {
		removed := false
		for p := uint32(1); p <= d.Ports; p++ {
			r := res[0]
			res = res[1:]
			if r.err != nil {
				if !isEINVAL(r.err) {
					return nil, r.err
				}
				removed = true
				continue
			}
			port, err := decodePort(r.data)
			if err != nil {
				return nil, wrap("get ports", err)
			}
			out[i] = append(out[i], port)
		}
		if removed {
			out[i] = nil
		}
	}
	return out, nil
}

// chardevResult decodes a batched GET_CHARDEV: nil when there is no such
// char device here (its client not loaded, a port without MADs, a device
// gone), an error for anything else.
func chardevResult(typ ChardevType, r result) (*Chardev, error) {
	if r.err != nil {
		if errors.Is(r.err, unix.EOPNOTSUPP) || errors.Is(r.err, unix.ENOENT) || errors.Is(r.err, unix.EINVAL) || errors.Is(r.err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, r.err
	}
	ch, err := decodeChardev(r.data)
	if err != nil {
		return nil, wrap("inventory", err)
	}
	ch.Type = typ
	return &ch, nil
}

// portRequest is PORT_GET's doit for one port.
func portRequest(dev, port uint32) request {
	return request{op: fmt.Sprintf("get port %d of device %d", port, dev), cmd: nlabi.RDMA_NLDEV_CMD_PORT_GET,
		attrs: func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
		}}
}
