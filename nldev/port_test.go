package nldev

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

func portAttrs(t *testing.T, dev, port uint32, ibPort bool) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
	ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0")
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
	if ibPort {
		ae.Uint64(nlabi.RDMA_NLDEV_ATTR_CAP_FLAGS, 1<<1|1<<16|1<<33)
		ae.Uint64(nlabi.RDMA_NLDEV_ATTR_SUBNET_PREFIX, 0xfe80000000000000)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_LID, 7)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_SM_LID, 1)
		ae.Uint8(nlabi.RDMA_NLDEV_ATTR_LMC, 0)
	}
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_PORT_STATE, 4)
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5)
	if !ibPort {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_NDEV_INDEX, 12)
		ae.String(nlabi.RDMA_NLDEV_ATTR_NDEV_NAME, "eth0")
	}
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPorts(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		if want := netlink.HeaderType(nlabi.RDMA_NL_NLDEV<<10 | nlabi.RDMA_NLDEV_CMD_PORT_GET); req.Header.Type != want {
			t.Errorf("request type %#x, want PORT_GET", req.Header.Type)
		}
		a := reqAttrs(t, req)
		dev, port := reqU32(a, nlabi.RDMA_NLDEV_ATTR_DEV_INDEX), reqU32(a, nlabi.RDMA_NLDEV_ATTR_PORT_INDEX)
		if dev != 2 || port > 2 {
			return nil, unix.EINVAL
		}
		// The doit's reply carries the GET message type, a kernel quirk.
		if req.Header.Flags&netlink.Dump == 0 {
			return []netlink.Message{{Header: netlink.Header{Type: typeGET}, Data: portAttrs(t, 2, port, port == 1)}}, 0
		}
		return []netlink.Message{
			{Header: netlink.Header{Type: req.Header.Type}, Data: portAttrs(t, 2, 1, true)},
			{Header: netlink.Header{Type: req.Header.Type}, Data: portAttrs(t, 2, 2, false)},
		}, 0
	})

	ibPort := Port{DevIndex: 2, DevName: "mlx5_0", Index: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp,
		IB: &IBPort{Caps: 1<<1 | 1<<16 | 1<<33, SubnetPrefix: ib.GUIDFromUint64(0xfe80000000000000), LID: 7, SMLID: 1}}
	roce := Port{DevIndex: 2, DevName: "mlx5_0", Index: 2, State: ib.PortActive, PhysState: ib.PhysLinkUp,
		NetdevIndex: 12, Netdev: "eth0"}

	ports, err := c.Ports(2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Port{ibPort, roce}, ports); diff != "" {
		t.Fatalf("Ports (-want +got):\n%s", diff)
	}
	p, err := c.Port(2, 2)
	if err != nil || !cmp.Equal(p, roce) {
		t.Fatalf("Port(2, 2) = %+v, %v", p, err)
	}
	if got := ibPort.IB.Caps.String(); got != "SM, CM, EXT_INFO" {
		t.Errorf("port caps = %q", got)
	}
	if _, err := c.Port(2, 3); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Port(2, 3) = %v, want os.ErrNotExist", err)
	}
	if _, err := c.Ports(5); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Ports(5) = %v, want os.ErrNotExist", err)
	}
	if _, err := c.Port(2, 0); !errors.Is(err, unix.EINVAL) {
		t.Errorf("Port(2, 0) = %v, want EINVAL", err)
	}
}

func TestAddDeleteLink(t *testing.T) {
	var sent []netlink.Message
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		sent = append(sent, req)
		// The kernel answers a write with an acknowledgement.
		return []netlink.Message{kernelError(req, 0)}, 0
	})
	if err := c.AddLink("rxe9", LinkRXE, "veth3"); err != nil {
		t.Fatalf("AddLink: %v", err)
	}
	if err := c.DeleteLink(4); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	if len(sent) != 2 {
		t.Fatalf("sent %d requests, want 2", len(sent))
	}
	for _, m := range sent {
		if m.Header.Flags != netlink.Request|netlink.Acknowledge {
			t.Errorf("flags %v, want Request|Acknowledge", m.Header.Flags)
		}
	}
	ad, _ := netlink.NewAttributeDecoder(sent[0].Data)
	got := map[uint16]string{}
	for ad.Next() {
		got[ad.Type()] = ad.String()
	}
	want := map[uint16]string{nlabi.RDMA_NLDEV_ATTR_DEV_NAME: "rxe9", nlabi.RDMA_NLDEV_ATTR_LINK_TYPE: "rxe", nlabi.RDMA_NLDEV_ATTR_NDEV_NAME: "veth3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("NEWLINK attributes (-want +got):\n%s", diff)
	}

	sent = nil
	for _, tt := range []struct{ name, typ, netdev string }{
		{"", "rxe", "veth0"}, {"rxe%d", "rxe", "veth0"}, {string(make([]byte, 64)), "rxe", "veth0"},
		{"rxe9", "", "veth0"}, {"rxe9", "rxe", ""}, {"rxe9", "rxe", "averyveryverylongname"}, {"rxe9", "rxe", "a/b"},
	} {
		if err := c.AddLink(tt.name, LinkType(tt.typ), tt.netdev); !errors.Is(err, unix.EINVAL) {
			t.Errorf("AddLink(%q, %q, %q) = %v, want EINVAL", tt.name, tt.typ, tt.netdev, err)
		}
	}
	if len(sent) != 0 {
		t.Fatalf("bad input reached the kernel %d times", len(sent))
	}
}

func TestAddLinkUnknownType(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) { return nil, unix.EINVAL })
	err := c.AddLink("x0", "nosuch", "veth0")
	if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), `unknown link type "nosuch"`) {
		t.Fatalf("AddLink with an unknown type = %v", err)
	}
}

func FuzzDecodePort(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePort(b)
		if err != nil {
			return
		}
		again, err := decodePort(b)
		if err != nil || !cmp.Equal(p, again) {
			t.Fatalf("decoding %x twice gave %+v then %+v, %v", b, p, again, err)
		}
	})
}
