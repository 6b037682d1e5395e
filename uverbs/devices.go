package uverbs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/nlconn"
	"github.com/rdmastack/rdmastack/nldev"
)

// Device is what opening an RDMA device's verbs context needs: the
// device's identity and its uverbs char device. Package device lists every
// RDMA device (device.Device embeds this type, so a device.Device opens
// with no conversion); DeviceByName finds one by name.
type Device struct {
	Name  string // the RDMA device's name, e.g. "rxe0"
	Index uint32 // its RDMA netlink index: a device registered again gets a new one

	// DriverID identifies the kernel driver; every ioctl carries it, and
	// it selects the driver data of the commands. ib.DriverUnknown when
	// the kernel does not say.
	DriverID ib.DriverID

	// NodeType is the device's node type (RDMA netlink's); its transport
	// (Transport) says InfiniBand or iWARP. 0 when not known.
	NodeType ib.NodeType

	Uverbs string // the uverbs char device's name, e.g. "uverbs0"; "" when the device has none
	Dev    uint64 // the char device's dev_t (unix.Major, unix.Minor); 0 when not known
	ABI    uint32 // the uverbs ABI version the driver speaks
}

// NewDevice is the Device of nd whose uverbs char device RDMA netlink (or
// sysfs) reported as ch; ch nil: a device without one.
func NewDevice(nd nldev.Device, ch *nldev.Chardev) Device {
	d := Device{Name: nd.Name, Index: nd.Index, NodeType: nd.NodeType}
	if ch != nil {
		d.DriverID, d.Uverbs, d.Dev, d.ABI = ch.DriverID, ch.Name, ch.Dev, uint32(ch.ABI)
	}
	return d
}

// Path is the device node, /dev/infiniband/<Uverbs>; "" when the device
// has no uverbs char device.
func (d Device) Path() string {
	if d.Uverbs == "" {
		return ""
	}
	return filepath.Join(devDir, d.Uverbs)
}

// Paths of the kernel's interfaces; tests point them elsewhere.
var (
	devDir        = "/dev/infiniband"
	sysInfiniband = "/sys/class/infiniband" // read for GIDs and P_Keys the commands cannot give
)

// DeviceByName returns the device called name in the caller's network
// namespace, asking RDMA netlink (GET, then GET_CHARDEV "uverbs"; Linux
// 5.3+, on the process's one RDMA netlink socket), with an error matching
// os.ErrNotExist when there is none or it has no uverbs char device. To
// list devices, use package device.
func DeviceByName(name string) (Device, error) {
	const op = "find device"
	var nd nldev.Device
	var ch nldev.Chardev
	err := nlconn.Do(func(c *nldev.Client) (err error) {
		if nd, err = c.DeviceByName(name); err != nil {
			return err
		}
		ch, err = c.UverbsChardev(nd.Index)
		if errors.Is(err, unix.EOPNOTSUPP) {
			// The kernel's answer for a device without a uverbs client.
			err = fmt.Errorf("no uverbs char device (%w): %w", err, os.ErrNotExist)
		}
		return err
	})
	if err != nil {
		return Device{}, wrap(name, op, err)
	}
	return NewDevice(nd, &ch), nil
}

// gone reports whether the kernel no longer has d's uverbs char device:
// RDMA netlink knows no device with d's index (in the caller's network
// namespace), the device has no uverbs client any more (the kernel removes
// it, and unregisters the char device, before it disassociates the
// contexts; GET_CHARDEV then answers EOPNOTSUPP), or names another char
// device. When RDMA netlink cannot tell, the device is taken to be there.
func (d Device) gone() bool {
	ch, err := uverbsChardev(d.Index)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.EOPNOTSUPP):
		return true
	case err != nil:
		return false
	}
	return d.Uverbs != "" && ch.Name != d.Uverbs
}

// uverbsChardev asks RDMA netlink, on the process's one socket
// (internal/nlconn), for the uverbs char device of the device with index;
// tests replace it.
var uverbsChardev = func(index uint32) (ch nldev.Chardev, err error) {
	err = nlconn.Do(func(c *nldev.Client) error {
		ch, err = c.UverbsChardev(index)
		return err
	})
	return ch, err
}
