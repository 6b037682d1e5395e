package nldev

import (
	"fmt"
	"strings"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Device is one RDMA device as RDMA_NLDEV_CMD_GET reports it.
type Device struct {
	Index           uint32      // RDMA_NLDEV_ATTR_DEV_INDEX
	Name            string      // RDMA_NLDEV_ATTR_DEV_NAME
	Ports           uint32      // number of ports (RDMA_NLDEV_ATTR_PORT_INDEX in GET replies)
	Caps            DeviceCaps  // RDMA_NLDEV_ATTR_CAP_FLAGS: the device_cap_flags
	FirmwareVersion string      // RDMA_NLDEV_ATTR_FW_VERSION; empty when the driver has none
	NodeGUID        ib.GUID     // RDMA_NLDEV_ATTR_NODE_GUID
	SysImageGUID    ib.GUID     // RDMA_NLDEV_ATTR_SYS_IMAGE_GUID
	NodeType        ib.NodeType // RDMA_NLDEV_ATTR_DEV_NODE_TYPE
	Protocol        Protocol    // RDMA_NLDEV_ATTR_DEV_PROTOCOL (5.2+); empty when absent

	// AdaptiveModeration is the DIM setting (RDMA_NLDEV_ATTR_DEV_DIM,
	// 5.3+); nil when the kernel does not report it.
	AdaptiveModeration *bool

	Type           DeviceType     // RDMA_NLDEV_ATTR_DEV_TYPE (6.11+); 0 for ordinary devices
	Parent         string         // RDMA_NLDEV_ATTR_PARENT_NAME: set for sub-devices (6.11+)
	NameAssignType NameAssignType // RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE (6.11+)
}

// Protocol is the device's transport as the kernel names it
// (RDMA_NLDEV_ATTR_DEV_PROTOCOL, decided by the device's first port).
type Protocol string

// Protocols the kernel reports.
const (
	ProtocolIB    Protocol = "ib"
	ProtocolIWARP Protocol = "iw"
	ProtocolRoCE  Protocol = "roce"
	ProtocolOPA   Protocol = "opa"
	ProtocolUSNIC Protocol = "usnic"
)

func (p Protocol) String() string { return string(p) }

// DeviceType is RDMA_NLDEV_ATTR_DEV_TYPE (enum rdma_nl_dev_type).
type DeviceType uint8

// Device types.
const (
	DeviceTypeDefault DeviceType = 0 // an ordinary device; the kernel omits the attribute
	DeviceTypeSMI     DeviceType = 1 // RDMA_DEVICE_TYPE_SMI: a sub-device that serves SMI
)

func (t DeviceType) String() string {
	switch t {
	case DeviceTypeDefault:
		return "default"
	case DeviceTypeSMI:
		return "smi"
	}
	return "unknown"
}

// NameAssignType tells who chose a device's name
// (RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE, enum rdma_nl_name_assign_type).
type NameAssignType uint8

// Name assignment types.
const (
	NameAssignUnknown NameAssignType = 0 // RDMA_NAME_ASSIGN_TYPE_UNKNOWN
	NameAssignUser    NameAssignType = 1 // RDMA_NAME_ASSIGN_TYPE_USER: set by a user
)

func (t NameAssignType) String() string {
	switch t {
	case NameAssignUnknown:
		return "unknown"
	case NameAssignUser:
		return "user"
	}
	return fmt.Sprintf("NameAssignType(%d)", uint8(t))
}

// Devices returns every RDMA device visible in the caller's network
// namespace, in the kernel's order (by index).
func (c *Client) Devices() ([]Device, error) {
	return dumpAll(c, request{op: "dump devices", cmd: nlabi.RDMA_NLDEV_CMD_GET}, "", decodeDevice)
}

// Device returns the device with the given index. An index the kernel does
// not know gives an error matching os.ErrNotExist (the kernel itself
// answers EINVAL, which the error also matches).
func (c *Client) Device(index uint32) (Device, error) {
	return getOne(c, request{op: fmt.Sprintf("get device %d", index), cmd: nlabi.RDMA_NLDEV_CMD_GET,
		attrs: func(ae *netlink.AttributeEncoder) { ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, index) }},
		fmt.Sprintf("no device with index %d", index), decodeDevice)
}

// DeviceByName returns the device with the given name. The kernel's GET
// ignores names, so this dumps and filters, as iproute2 does. A name that
// cannot be a device name (empty, longer than 63 bytes, or containing '%'
// or '/') is rejected before anything is sent.
func (c *Client) DeviceByName(name string) (Device, error) {
	op := fmt.Sprintf("get device %q", name)
	if err := checkDeviceName(name); err != nil {
		return Device{}, invalid(op, err.Error())
	}
	devs, err := c.Devices()
	if err != nil {
		return Device{}, err
	}
	for _, d := range devs {
		if d.Name == name {
			return d, nil
		}
	}
	return Device{}, notFound(op, "no such device")
}

// checkDeviceName applies the kernel's rules for device names
// (ib_device_rename and nldev_policy: at most IB_DEVICE_NAME_MAX-1 bytes,
// no '%' format, and a name sysfs can hold).
func checkDeviceName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty device name")
	case len(name) >= nlabi.IB_DEVICE_NAME_MAX:
		return fmt.Errorf("device name of %d bytes is longer than %d", len(name), nlabi.IB_DEVICE_NAME_MAX-1)
	case strings.ContainsAny(name, "%/"):
		return fmt.Errorf("device name %q contains '%%' or '/'", name)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("device name contains a NUL byte")
	}
	return nil
}

// decodeDevice parses the attributes of one RDMA_NLDEV_CMD_GET reply.
func decodeDevice(b []byte) (Device, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return Device{}, err
	}
	var d Device
	var haveIndex, haveName bool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			d.Index = ad.Uint32()
			haveIndex = true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			d.Name = ad.String()
			haveName = true
		case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
			d.Ports = ad.Uint32()
		case nlabi.RDMA_NLDEV_ATTR_CAP_FLAGS:
			d.Caps = DeviceCaps(ad.Uint64())
		case nlabi.RDMA_NLDEV_ATTR_FW_VERSION:
			d.FirmwareVersion = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_NODE_GUID:
			d.NodeGUID = ib.GUIDFromUint64(ad.Uint64())
		case nlabi.RDMA_NLDEV_ATTR_SYS_IMAGE_GUID:
			d.SysImageGUID = ib.GUIDFromUint64(ad.Uint64())
		case nlabi.RDMA_NLDEV_ATTR_DEV_NODE_TYPE:
			d.NodeType = ib.NodeType(ad.Uint8())
		case nlabi.RDMA_NLDEV_ATTR_DEV_PROTOCOL:
			d.Protocol = Protocol(ad.String())
		case nlabi.RDMA_NLDEV_ATTR_DEV_DIM:
			on := ad.Uint8() != 0
			d.AdaptiveModeration = &on
		case nlabi.RDMA_NLDEV_ATTR_DEV_TYPE:
			d.Type = DeviceType(ad.Uint8())
		case nlabi.RDMA_NLDEV_ATTR_PARENT_NAME:
			d.Parent = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE:
			d.NameAssignType = NameAssignType(ad.Uint8())
		}
	}
	if err := ad.Err(); err != nil {
		return Device{}, fmt.Errorf("decode device: %w", err)
	}
	if !haveIndex || !haveName {
		return Device{}, fmt.Errorf("decode device: reply lacks the device index or name: %w", errProto)
	}
	return d, nil
}
