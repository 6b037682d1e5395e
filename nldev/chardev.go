package nldev

import (
	"fmt"
	"path/filepath"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// ChardevType names a kernel client that owns RDMA character devices
// (RDMA_NLDEV_ATTR_CHARDEV_TYPE).
type ChardevType string

// Char device types.
const (
	ChardevUverbs ChardevType = "uverbs"  // per device: /dev/infiniband/uverbsN
	ChardevUmad   ChardevType = "umad"    // per IB port: /dev/infiniband/umadN
	ChardevIssm   ChardevType = "issm"    // per IB port: /dev/infiniband/issmN
	ChardevRdmaCM ChardevType = "rdma_cm" // global: /dev/infiniband/rdma_cm
)

func (t ChardevType) String() string { return string(t) }

// Chardev is what RDMA_NLDEV_CMD_GET_CHARDEV reports: the kernel name of a
// char device, its device number and the ABI version its client speaks.
type Chardev struct {
	Type ChardevType
	Name string // RDMA_NLDEV_ATTR_CHARDEV_NAME, e.g. "uverbs0"
	Dev  uint64 // RDMA_NLDEV_ATTR_CHARDEV: a dev_t (unix.Major, unix.Minor)
	ABI  uint64 // RDMA_NLDEV_ATTR_CHARDEV_ABI

	// DriverID is the uverbs driver id (RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID);
	// HasDriverID is false when the driver does not report one.
	DriverID    ib.DriverID
	HasDriverID bool
}

// Path is the device node's usual path, /dev/infiniband/<name>.
func (c Chardev) Path() string { return filepath.Join("/dev/infiniband", c.Name) }

// UverbsChardev returns the uverbs char device of the device with index
// dev: the node through which verbs reach it.
func (c *Client) UverbsChardev(dev uint32) (Chardev, error) {
	return c.chardev(ChardevUverbs, &dev, 0)
}

// UmadChardev returns the umad char device of an IB port (from 1). A port
// that has no MAD interface (RoCE on newer kernels) gives EOPNOTSUPP.
func (c *Client) UmadChardev(dev, port uint32) (Chardev, error) {
	return c.chardev(ChardevUmad, &dev, port)
}

// IssmChardev returns the issm char device of an IB port (from 1).
func (c *Client) IssmChardev(dev, port uint32) (Chardev, error) {
	return c.chardev(ChardevIssm, &dev, port)
}

// RdmaCMChardev returns the global rdma_cm char device (librdmacm's).
func (c *Client) RdmaCMChardev() (Chardev, error) {
	return c.chardev(ChardevRdmaCM, nil, 0)
}

// chardev sends GET_CHARDEV with exactly the attributes the client needs:
// before 6.12 the kernel parses this command strictly.
func (c *Client) chardev(typ ChardevType, dev *uint32, port uint32) (Chardev, error) {
	r := chardevRequest(typ, dev, port)
	if (typ == ChardevUmad || typ == ChardevIssm) && port == 0 {
		return Chardev{}, invalid(r.op, "ports are numbered from 1")
	}
	ch, err := getOne(c, r, notFoundFor(dev != nil), decodeChardev)
	if err != nil {
		return Chardev{}, err
	}
	ch.Type = typ
	return ch, nil
}

// chardevRequest is GET_CHARDEV with exactly the attributes the client
// needs: before 6.12 the kernel parses this command strictly.
func chardevRequest(typ ChardevType, dev *uint32, port uint32) request {
	op := "get " + string(typ) + " char device"
	switch {
	case dev != nil && port != 0:
		op += fmt.Sprintf(" of device %d port %d", *dev, port)
	case dev != nil:
		op += fmt.Sprintf(" of device %d", *dev)
	}
	return request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_GET_CHARDEV, attrs: func(ae *netlink.AttributeEncoder) {
		ae.String(nlabi.RDMA_NLDEV_ATTR_CHARDEV_TYPE, string(typ))
		if dev != nil {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, *dev)
		}
		if port != 0 {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
		}
	}}
}

// notFoundFor says what the kernel's EINVAL means for a chardev query:
// the device or port index is wrong, when one was sent.
func notFoundFor(indexed bool) string {
	if indexed {
		return "no such device or port"
	}
	return ""
}

func decodeChardev(b []byte) (Chardev, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return Chardev{}, err
	}
	var ch Chardev
	var haveName bool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_CHARDEV_NAME:
			ch.Name, haveName = ad.String(), true
		case nlabi.RDMA_NLDEV_ATTR_CHARDEV:
			ch.Dev = ad.Uint64()
		case nlabi.RDMA_NLDEV_ATTR_CHARDEV_ABI:
			ch.ABI = ad.Uint64()
		case nlabi.RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID:
			ch.DriverID, ch.HasDriverID = ib.DriverID(ad.Uint32()), true
		}
	}
	if err := ad.Err(); err != nil {
		return Chardev{}, fmt.Errorf("decode char device: %w", err)
	}
	if !haveName {
		return Chardev{}, fmt.Errorf("decode char device: reply lacks the name: %w", errProto)
	}
	return ch, nil
}
