package nldev

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Rename gives the device with index dev a new name (RDMA_NLDEV_CMD_SET
// with RDMA_NLDEV_ATTR_DEV_NAME; needs CAP_NET_ADMIN). A name in use
// gives EEXIST.
func (c *Client) Rename(dev uint32, name string) error {
	op := fmt.Sprintf("rename device %d to %q", dev, name)
	if err := checkDeviceName(name); err != nil {
		return invalid(op, err.Error())
	}
	return c.set(op, dev, func(ae *netlink.AttributeEncoder) { ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, name) })
}

// SetAdaptiveModeration turns the device's adaptive interrupt moderation
// (DIM) on or off (RDMA_NLDEV_ATTR_DEV_DIM; needs CAP_NET_ADMIN).
func (c *Client) SetAdaptiveModeration(dev uint32, on bool) error {
	var v uint8
	if on {
		v = 1
	}
	return c.set(fmt.Sprintf("set adaptive-moderation %s on device %d", onOff(on), dev), dev,
		func(ae *netlink.AttributeEncoder) { ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DEV_DIM, v) })
}

// SetNetnsFD moves the device with index dev into the network namespace
// that the open file nsfd refers to (RDMA_NLDEV_NET_NS_FD; needs
// CAP_NET_ADMIN and exclusive netns mode). The kernel resolves nsfd in
// this process's file table, and takes the device out of the network
// namespace of the calling thread: to move a device out of another
// namespace, call it from a thread inside that one (device.ReturnFromNetNS
// does). A refusal matches ErrSharedMode, ErrDriverCannotMove or ErrBusy;
// a closed nsfd, or one that is not a network namespace, is refused
// before anything is sent (unix.EBADF, ErrNotNetNS).
func (c *Client) SetNetnsFD(dev uint32, nsfd int) error {
	return c.setNetns(fmt.Sprintf("move device %d to netns fd %d", dev, nsfd), dev, nsfd)
}

// SetNetns moves the device into the network namespace named ns, read as
// iproute2 reads it: a number is a process id (/proc/PID/ns/net), anything
// else a name under /run/netns. A namespace that does not exist gives an
// error matching os.ErrNotExist, and nothing is sent.
func (c *Client) SetNetns(dev uint32, ns string) error {
	op := fmt.Sprintf("move device %d to netns %s", dev, ns)
	path, err := netnsPath(ns)
	if err != nil {
		return invalid(op, err.Error())
	}
	f, err := os.Open(path)
	if err != nil {
		return &Error{Op: op, Err: err}
	}
	defer f.Close()
	return c.setNetns(op, dev, int(f.Fd()))
}

func (c *Client) setNetns(op string, dev uint32, fd int) error {
	if err := checkNetnsFD(op, fd); err != nil {
		return err
	}
	err := c.set(op, dev, func(ae *netlink.AttributeEncoder) { ae.Uint32(nlabi.RDMA_NLDEV_NET_NS_FD, uint32(fd)) })
	return c.explainMove(err)
}

// netnsPath maps iproute2's NETNS argument to a namespace file.
func netnsPath(ns string) (string, error) {
	if ns == "" {
		return "", fmt.Errorf("empty network namespace name")
	}
	if pid, err := strconv.ParseUint(ns, 10, 31); err == nil {
		return filepath.Join("/proc", strconv.FormatUint(pid, 10), "ns", "net"), nil
	}
	if strings.ContainsRune(ns, '/') || ns == "." || ns == ".." {
		return "", fmt.Errorf("invalid network namespace name %q", ns)
	}
	return filepath.Join("/run/netns", ns), nil
}

// set sends RDMA_NLDEV_CMD_SET with the device index and one setting: the
// kernel applies only the first of name, netns and DIM it finds.
func (c *Client) set(op string, dev uint32, attr func(*netlink.AttributeEncoder)) error {
	err := c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_SET,
		attrs: func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
			attr(ae)
		}})
	return c.explainEINVAL(op, dev, err)
}
