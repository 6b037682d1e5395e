package nldev

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

func dialVM(t *testing.T) *Client {
	t.Helper()
	testenv.RequireRDMA(t)
	c, err := Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIntegrationDevicesMatchIproute2 asks the kernel for its devices and
// compares the answer, field by field, with what iproute2 prints.
func TestIntegrationDevicesMatchIproute2(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	rdma := testenv.Oracle(t, "rdma")
	var theirs []map[string]any
	if err := json.Unmarshal(testenv.Run(t, rdma, "-j", "dev", "show"), &theirs); err != nil {
		t.Fatalf("parse iproute2 JSON: %v", err)
	}
	withProtocol := testenv.Iproute2Version(t, rdma)[0]*100+testenv.Iproute2Version(t, rdma)[1] >= 605

	ours := make([]map[string]any, 0, len(devs))
	for _, d := range devs {
		m := map[string]any{
			"ifindex":        float64(d.Index),
			"ifname":         d.Name,
			"node_type":      d.NodeType.String(),
			"node_guid":      d.NodeGUID.String(),
			"sys_image_guid": d.SysImageGUID.String(),
		}
		if d.FirmwareVersion != "" {
			m["fw"] = d.FirmwareVersion
		}
		// iproute2 prints the protocol from 6.5 on (commit bc42cde0).
		if d.Protocol != "" && withProtocol {
			m["protocol"] = d.Protocol.String()
		}
		if d.Type != DeviceTypeDefault {
			m["type"] = d.Type.String()
		}
		if d.Parent != "" {
			m["parent"] = d.Parent
		}
		ours = append(ours, m)
	}
	if diff := cmp.Diff(theirs, ours); diff != "" {
		t.Fatalf("devices differ from iproute2 (-iproute2 +ours):\n%s", diff)
	}
	if want := os.Getenv("RDMASTACK_VM_DEVICES"); want != "" {
		if got := len(devs); want != itoa(got) {
			t.Fatalf("kernel reports %d devices, the VM made %s", got, want)
		}
	}
	for _, d := range devs {
		if d.NodeGUID.IsZero() || d.Ports != 1 || d.Protocol != ProtocolRoCE {
			t.Errorf("rxe device %+v: want a node GUID, one port and protocol roce", d)
		}
	}
}

// TestIntegrationDeviceLookups checks Device and DeviceByName against the
// dump, and that unknown devices give typed errors.
func TestIntegrationDeviceLookups(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		byIdx, err := c.Device(d.Index)
		if err != nil {
			t.Fatalf("Device(%d): %v", d.Index, err)
		}
		byName, err := c.DeviceByName(d.Name)
		if err != nil {
			t.Fatalf("DeviceByName(%s): %v", d.Name, err)
		}
		if diff := cmp.Diff(d, byIdx); diff != "" {
			t.Errorf("Device(%d) differs from the dump:\n%s", d.Index, diff)
		}
		if diff := cmp.Diff(d, byName); diff != "" {
			t.Errorf("DeviceByName(%s) differs from the dump:\n%s", d.Name, diff)
		}
	}
	if _, err := c.Device(1 << 30); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Device(1<<30) = %v, want os.ErrNotExist", err)
	}
	if _, err := c.DeviceByName("nosuchdev0"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DeviceByName(nosuchdev0) = %v, want os.ErrNotExist", err)
	}
}

// TestIntegrationCaptureFixtures records the kernel's raw replies for the
// unit tests (testdata/<kernel>/), and checks that the decoders accept
// every one of them.
func TestIntegrationCaptureFixtures(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil || len(devs) == 0 {
		t.Fatalf("Devices: %d, %v", len(devs), err)
	}
	dev := devs[0].Index
	u32 := func(typ uint16, v uint32) func(*netlink.AttributeEncoder) {
		return func(ae *netlink.AttributeEncoder) { ae.Uint32(typ, v) }
	}
	for _, fx := range []struct {
		name   string
		cmd    uint16
		flags  netlink.HeaderFlags
		attrs  func(*netlink.AttributeEncoder)
		decode func([]byte) error
	}{
		{"dev-dump", nlabi.RDMA_NLDEV_CMD_GET, netlink.Dump, nil, func(b []byte) error { _, err := decodeDevice(b); return err }},
		{"port-dump", nlabi.RDMA_NLDEV_CMD_PORT_GET, netlink.Dump, u32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev), func(b []byte) error { _, err := decodePort(b); return err }},
		{"sys-get", nlabi.RDMA_NLDEV_CMD_SYS_GET, 0, nil, func(b []byte) error { _, err := decodeSystem(b); return err }},
		{"chardev-uverbs", nlabi.RDMA_NLDEV_CMD_GET_CHARDEV, 0, func(ae *netlink.AttributeEncoder) {
			ae.String(nlabi.RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs")
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		}, func(b []byte) error { _, err := decodeChardev(b); return err }},
	} {
		var data []byte
		if fx.attrs != nil {
			ae := netlink.NewAttributeEncoder()
			fx.attrs(ae)
			data, _ = ae.Encode()
		}
		msgs, err := c.c.Execute(netlink.Message{
			Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_NLDEV, fx.cmd)), Flags: netlink.Request | fx.flags},
			Data:   data,
		})
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		if len(msgs) == 0 {
			t.Fatalf("%s: no reply", fx.name)
		}
		for _, m := range msgs {
			if err := fx.decode(m.Data); err != nil {
				t.Fatalf("%s: decode a real reply: %v", fx.name, err)
			}
		}
		if out := testenv.OutDir(); out != "" {
			writeFixture(t, filepath.Join(out, "testdata", "nldev"), testenv.KernelRelease(), fx.name, msgs)
		}
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}
