package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// AddSubDevice creates a sub-device called name of type typ under the
// device with index parent, as "rdma dev add NAME type smi parent PARENT"
// does (RDMA_NLDEV_CMD_NEWDEV, Linux 6.11; needs CAP_NET_ADMIN). Only
// drivers that support sub-devices of that type accept it. On kernels
// before 6.11 the error matches ErrNotSupported and nothing is sent.
func (c *Client) AddSubDevice(parent uint32, name string, typ DeviceType) error {
	op := fmt.Sprintf("add %s sub-device %q to device %d", typ, name, parent)
	if err := checkDeviceName(name); err != nil {
		return invalid(op, err.Error())
	}
	if typ != DeviceTypeSMI {
		return invalid(op, fmt.Sprintf("unknown sub-device type %d (the kernel has smi)", uint8(typ)))
	}
	if err := c.requireSubDevices(op); err != nil {
		return err
	}
	return c.explainEINVAL(op, parent, c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_NEWDEV,
		attrs: func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, parent)
			ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, name)
			ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DEV_TYPE, uint8(typ))
		}}))
}

// DeleteSubDevice removes the sub-device with index dev
// (RDMA_NLDEV_CMD_DELDEV, Linux 6.11; needs CAP_NET_ADMIN).
func (c *Client) DeleteSubDevice(dev uint32) error {
	op := fmt.Sprintf("delete sub-device %d", dev)
	if err := c.requireSubDevices(op); err != nil {
		return err
	}
	return c.explainEINVAL(op, dev, c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_DELDEV,
		attrs: func(ae *netlink.AttributeEncoder) { ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev) }}))
}

// requireSubDevices checks that the kernel has NEWDEV/DELDEV. They came
// in 6.11 together with RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE, which every GET
// reply of such a kernel carries; an old kernel would answer the unknown
// command with an EINVAL indistinguishable from bad arguments.
func (c *Client) requireSubDevices(op string) error {
	has, err := c.getReplyHas(nlabi.RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE)
	if err != nil {
		return err
	}
	if !has {
		return &Error{Op: op, Err: fmt.Errorf("sub-devices need Linux 6.11: %w", ErrNotSupported)}
	}
	return nil
}

// getReplyHas reports whether the kernel's device replies carry attribute
// attr, a probe for the release that brought it. With no device at all it
// answers true: the command is then tried and the kernel decides.
func (c *Client) getReplyHas(attr uint16) (bool, error) {
	msgs, err := c.execute(request{op: "probe kernel features", cmd: nlabi.RDMA_NLDEV_CMD_GET, dump: true})
	if err != nil {
		return false, err
	}
	if len(msgs) == 0 {
		return true, nil
	}
	ad, err := netlink.NewAttributeDecoder(msgs[0])
	if err != nil {
		return false, wrap("probe kernel features", err)
	}
	for ad.Next() {
		if ad.Type() == attr {
			return true, nil
		}
	}
	return false, wrap("probe kernel features", ad.Err())
}
