package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// LinkType names a software RDMA driver that RDMA_NLDEV_CMD_NEWLINK can
// attach to a network device.
type LinkType string

// Link types the kernel knows.
const (
	LinkRXE LinkType = "rxe" // Soft-RoCE (rdma_rxe)
	LinkSIW LinkType = "siw" // Soft-iWARP (siw)
)

func (t LinkType) String() string { return string(t) }

// AddLink creates an RDMA device called name of the given type on the
// network device netdev, as "rdma link add NAME type TYPE netdev NETDEV"
// does (RDMA_NLDEV_CMD_NEWLINK; needs CAP_NET_ADMIN). The kernel loads the
// driver module on demand.
func (c *Client) AddLink(name string, typ LinkType, netdev string) error {
	op := fmt.Sprintf("add link %s type %s netdev %s", name, typ, netdev)
	if err := checkDeviceName(name); err != nil {
		return invalid(op, err.Error())
	}
	if err := checkNetdevName(netdev); err != nil {
		return invalid(op, err.Error())
	}
	if typ == "" || len(typ) >= nlabi.IFNAMSIZ {
		return invalid(op, fmt.Sprintf("link type %q is empty or longer than %d bytes", typ, nlabi.IFNAMSIZ-1))
	}
	err := c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_NEWLINK, attrs: func(ae *netlink.AttributeEncoder) {
		ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, name)
		ae.String(nlabi.RDMA_NLDEV_ATTR_LINK_TYPE, string(typ))
		ae.String(nlabi.RDMA_NLDEV_ATTR_NDEV_NAME, netdev)
	}})
	if isEINVAL(err) && typ != LinkRXE && typ != LinkSIW {
		return &Error{Op: op, Err: fmt.Errorf("unknown link type %q (the kernel has rxe and siw): %w", typ, unix.EINVAL)}
	}
	return err
}

// DeleteLink removes the software RDMA device with index dev (an rxe or siw
// device; RDMA_NLDEV_CMD_DELLINK; needs CAP_NET_ADMIN). Other devices cannot
// be removed this way and give EINVAL.
func (c *Client) DeleteLink(dev uint32) error {
	op := fmt.Sprintf("delete link %d", dev)
	return c.explainEINVAL(op, dev, c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_DELLINK,
		attrs: func(ae *netlink.AttributeEncoder) { ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev) }}))
}

// checkNetdevName applies the kernel's rules for network device names
// (dev_valid_name: 1 to IFNAMSIZ-1 bytes, not "." or "..", no '/', ':' or
// whitespace).
func checkNetdevName(name string) error {
	if name == "" || len(name) >= nlabi.IFNAMSIZ || name == "." || name == ".." {
		return fmt.Errorf("invalid network device name %q", name)
	}
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '/', ':', ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return fmt.Errorf("invalid network device name %q", name)
		}
	}
	return nil
}
