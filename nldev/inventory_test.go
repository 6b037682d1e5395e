package nldev

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

func chardevAttrs(t *testing.T, name string) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, 14)
	ae.Uint64(nlabi.RDMA_NLDEV_ATTR_CHARDEV, uint64(unix.Mkdev(231, 192)))
	ae.Uint64(nlabi.RDMA_NLDEV_ATTR_CHARDEV_ABI, 2)
	ae.String(nlabi.RDMA_NLDEV_ATTR_CHARDEV_NAME, name)
	b, _ := ae.Encode()
	return b
}

// TestInventory: devices with their ports and char devices; a device that
// vanished between the dump and its port query is left out; a port
// without MADs has nil entries.
func TestInventory(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		a := reqAttrs(t, req)
		dev, port := reqU32(a, nlabi.RDMA_NLDEV_ATTR_DEV_INDEX), reqU32(a, nlabi.RDMA_NLDEV_ATTR_PORT_INDEX)
		typ := strings.TrimRight(string(a[nlabi.RDMA_NLDEV_ATTR_CHARDEV_TYPE]), "\x00")
		switch cmdOf(req) {
		case nlabi.RDMA_NLDEV_CMD_GET:
			return []netlink.Message{
				{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 0, "rxe0", nil)},
				{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 2, "gone0", nil)},
			}, 0
		case nlabi.RDMA_NLDEV_CMD_PORT_GET:
			if dev == 2 {
				return nil, unix.EINVAL // removed meanwhile
			}
			return []netlink.Message{{Header: netlink.Header{Type: typeGET}, Data: portAttrs(t, dev, port, false)}}, 0
		case nlabi.RDMA_NLDEV_CMD_GET_CHARDEV:
			switch typ {
			case "uverbs":
				if dev == 2 {
					return nil, unix.EINVAL
				}
				return []netlink.Message{{Header: req.Header, Data: chardevAttrs(t, "uverbs0")}}, 0
			case "rdma_cm":
				return []netlink.Message{{Header: req.Header, Data: chardevAttrs(t, "rdma_cm")}}, 0
			}
			return nil, unix.EOPNOTSUPP // RoCE: no MAD interface
		}
		return nil, unix.EINVAL
	})
	inv, err := c.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != 1 {
		t.Fatalf("%d devices, want rxe0 only", len(inv.Devices))
	}
	d := inv.Devices[0]
	if d.Name != "rxe0" || len(d.Ports) != 1 || d.Ports[0].Netdev != "eth0" || d.Uverbs == nil ||
		d.Uverbs.Name != "uverbs0" || d.Uverbs.Type != ChardevUverbs || len(d.Umad) != 1 || d.Umad[0] != nil || d.Issm[0] != nil {
		t.Fatalf("inventory device %+v", d)
	}
	if inv.RdmaCM == nil || inv.RdmaCM.Name != "rdma_cm" || inv.RdmaCM.Type != ChardevRdmaCM {
		t.Fatalf("rdma_cm %+v", inv.RdmaCM)
	}
}

// TestInventoryFailure: an error that is not "no such char device" fails
// the inventory.
func TestInventoryFailure(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		if nlabi.GetOp(uint16(req.Header.Type)) == nlabi.RDMA_NLDEV_CMD_GET {
			return []netlink.Message{{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 0, "rxe0", nil)}}, 0
		}
		return nil, unix.EPERM
	})
	if _, err := c.Inventory(); err == nil {
		t.Fatal("an EPERM from the kernel was ignored")
	}
}

// TestPortsOf: every port of the given devices in one batch; a device the
// kernel no longer knows makes the whole answer ErrNotExist.
func TestPortsOf(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		a := reqAttrs(t, req)
		dev, port := reqU32(a, nlabi.RDMA_NLDEV_ATTR_DEV_INDEX), reqU32(a, nlabi.RDMA_NLDEV_ATTR_PORT_INDEX)
		if cmdOf(req) != nlabi.RDMA_NLDEV_CMD_PORT_GET || dev == 2 {
			return nil, unix.EINVAL
		}
		return []netlink.Message{{Header: netlink.Header{Type: typeGET}, Data: portAttrs(t, dev, port, false)}}, 0
	})
	ports, err := c.PortsOf([]Device{{Index: 0, Ports: 1}, {Index: 1, Ports: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 2 || len(ports[0]) != 1 || len(ports[1]) != 2 || ports[1][1].Index != 2 || ports[1][0].Netdev != "eth0" {
		t.Fatalf("PortsOf = %+v", ports)
	}
	if _, err := c.PortsOf([]Device{{Index: 0, Ports: 1}, {Index: 2, Ports: 1}}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("PortsOf with a device gone: %v, want os.ErrNotExist", err)
	}
}
