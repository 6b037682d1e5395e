package nldev

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

const typeGET = netlink.HeaderType(nlabi.RDMA_NL_NLDEV<<10 | nlabi.RDMA_NLDEV_CMD_GET)

// deviceAttrs encodes a GET reply the way nldev.c's fill_dev_info does,
// with the PAD attributes nla_put_u64_64bit may insert.
func deviceAttrs(t *testing.T, idx uint32, name string, extra func(ae *netlink.AttributeEncoder)) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, idx)
	ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, name)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1)
	ae.Bytes(nlabi.RDMA_NLDEV_ATTR_PAD, nil)
	ae.Uint64(nlabi.RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1000_0000_2001)
	ae.Uint64(nlabi.RDMA_NLDEV_ATTR_NODE_GUID, 0x025056fffe8a1b2c)
	ae.Uint64(nlabi.RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, 0x025056fffe8a1b2c)
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1)
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DEV_DIM, 0)
	if extra != nil {
		extra(ae)
	}
	ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce")
	ae.Uint16(200, 7) // an attribute from a future kernel: ignored
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantDevice(idx uint32, name string) Device {
	off := false
	return Device{
		Index:              idx,
		Name:               name,
		Ports:              1,
		Caps:               0x1000_0000_2001,
		NodeGUID:           ib.GUID{0x02, 0x50, 0x56, 0xff, 0xfe, 0x8a, 0x1b, 0x2c},
		SysImageGUID:       ib.GUID{0x02, 0x50, 0x56, 0xff, 0xfe, 0x8a, 0x1b, 0x2c},
		NodeType:           ib.NodeCA,
		Protocol:           ProtocolRoCE,
		AdaptiveModeration: &off,
	}
}

func TestDevicesDump(t *testing.T) {
	var got []netlink.Message
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		got = append(got, req)
		return []netlink.Message{
			{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 0, "rxe0", nil)},
			{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 1, "rxe1", func(ae *netlink.AttributeEncoder) {
				ae.String(nlabi.RDMA_NLDEV_ATTR_FW_VERSION, "1.2.3")
				ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DEV_TYPE, 1)
				ae.String(nlabi.RDMA_NLDEV_ATTR_PARENT_NAME, "rxe0")
				ae.Uint8(nlabi.RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE, 1)
			})},
		}, 0
	})

	devs, err := c.Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(got) != 1 || got[0].Header.Type != typeGET || got[0].Header.Flags != netlink.Request|netlink.Dump || len(got[0].Data) != 0 {
		t.Fatalf("request = %+v, want one GET dump without attributes", got)
	}
	second := wantDevice(1, "rxe1")
	second.FirmwareVersion = "1.2.3"
	second.Type = DeviceTypeSMI
	second.Parent = "rxe0"
	second.NameAssignType = NameAssignUser
	if diff := cmp.Diff([]Device{wantDevice(0, "rxe0"), second}, devs); diff != "" {
		t.Fatalf("devices (-want +got):\n%s", diff)
	}
}

func TestDeviceByIndex(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		if req.Header.Flags != netlink.Request {
			t.Errorf("flags = %v, want Request only (a data-returning doit must not ask for an ack)", req.Header.Flags)
		}
		ad, err := netlink.NewAttributeDecoder(req.Data)
		if err != nil {
			return nil, unix.EPROTO
		}
		var idx uint32
		var n int
		for ad.Next() {
			n++
			if ad.Type() == nlabi.RDMA_NLDEV_ATTR_DEV_INDEX {
				idx = ad.Uint32()
			}
		}
		if n != 1 {
			t.Errorf("request has %d attributes, want only DEV_INDEX", n)
		}
		if idx != 3 {
			return nil, unix.EINVAL
		}
		return []netlink.Message{{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 3, "mlx5_0", nil)}}, 0
	})

	d, err := c.Device(3)
	if err != nil {
		t.Fatalf("Device(3): %v", err)
	}
	if diff := cmp.Diff(wantDevice(3, "mlx5_0"), d); diff != "" {
		t.Fatalf("device (-want +got):\n%s", diff)
	}

	_, err = c.Device(9)
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("Device(9) = %v; want an error matching os.ErrNotExist and EINVAL", err)
	}
	var ne *Error
	if !errors.As(err, &ne) || ne.Op != "get device 9" {
		t.Fatalf("Device(9) error %v does not name the operation", err)
	}
}

func TestDeviceByName(t *testing.T) {
	calls := 0
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		calls++
		return []netlink.Message{
			{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 0, "rxe0", nil)},
			{Header: netlink.Header{Type: typeGET}, Data: deviceAttrs(t, 4, "rxe1", nil)},
		}, 0
	})

	d, err := c.DeviceByName("rxe1")
	if err != nil || d.Index != 4 {
		t.Fatalf("DeviceByName(rxe1) = %+v, %v; want index 4", d, err)
	}
	if _, err := c.DeviceByName("rxe7"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DeviceByName(rxe7) = %v, want os.ErrNotExist", err)
	}

	calls = 0
	long := string(make([]byte, 64))
	for _, name := range []string{"", "rxe%d", "a/b", long, "x\x00y"} {
		_, err := c.DeviceByName(name)
		if !errors.Is(err, unix.EINVAL) {
			t.Errorf("DeviceByName(%q) = %v, want EINVAL", name, err)
		}
	}
	if calls != 0 {
		t.Fatalf("bad names reached the kernel %d times", calls)
	}
}

func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		errno  unix.Errno
		target error
	}{
		{unix.EPERM, os.ErrPermission},
		{unix.ENOENT, os.ErrNotExist},
		{unix.ENODEV, os.ErrNotExist},
	} {
		c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) { return nil, tt.errno })
		_, err := c.Devices()
		if !errors.Is(err, tt.target) || !errors.Is(err, tt.errno) {
			t.Errorf("kernel errno %v: error %v does not match %v and the errno", tt.errno, err, tt.target)
		}
	}
}

func TestDecodeDeviceRejects(t *testing.T) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 1)
	noName, _ := ae.Encode()

	ae = netlink.NewAttributeEncoder()
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 1)
	ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, "x")
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_NODE_GUID, 1) // a u64 attribute 4 bytes long
	shortGUID, _ := ae.Encode()

	for name, b := range map[string][]byte{
		"no name":    noName,
		"short GUID": shortGUID,
		"truncated":  deviceAttrs(t, 0, "rxe0", nil)[:13],
	} {
		if _, err := decodeDevice(b); err == nil {
			t.Errorf("%s: decodeDevice accepted bad input", name)
		}
	}
}

func TestClosedClient(t *testing.T) {
	c := newClient(nltest.Dial(func(req []netlink.Message) ([]netlink.Message, error) { return nil, nil }))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Devices(); !errors.Is(err, unix.EBADF) {
		t.Fatalf("Devices on a closed client = %v, want EBADF", err)
	}
}

func FuzzDecodeDevice(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDevice(b)
		if err == nil && d.Name == "" && d.Index == 0 && len(b) < 8 {
			t.Fatalf("decoded a device from %d bytes", len(b))
		}
	})
}

func TestExtendedAckKept(t *testing.T) {
	c := newClient(nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
		return []netlink.Message{kernelErrorExtAck(reqs[0], unix.EINVAL, "Unknown device type")}, nil
	}))
	t.Cleanup(func() { c.Close() })
	err := c.do(request{op: "add sub-device", cmd: nlabi.RDMA_NLDEV_CMD_NEWDEV})
	var ne *Error
	if !errors.As(err, &ne) || ne.Message != "Unknown device type" || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("error %#v: want EINVAL with the kernel's message", err)
	}
	if got := err.Error(); got != "nldev: add sub-device: invalid argument (Unknown device type)" {
		t.Fatalf("Error() = %q", got)
	}
}
