package uverbs

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// listForTest lists the devices with a uverbs char device through RDMA
// netlink. Programs list them with package device, which imports this
// package and so cannot serve its tests.
func listForTest(t *testing.T) []Device {
	t.Helper()
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var out []Device
	for _, nd := range devs {
		ch, err := c.UverbsChardev(nd.Index)
		if errors.Is(err, unix.EOPNOTSUPP) {
			continue // no uverbs client
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, NewDevice(nd, &ch))
	}
	return out
}

// netlinkDevice is what RDMA netlink says of the device with index.
func netlinkDevice(t *testing.T, index uint32) nldev.Device {
	t.Helper()
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Device(index)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestNewDevice(t *testing.T) {
	nd := nldev.Device{Index: 3, Name: "rxe0", Ports: 1, NodeType: ib.NodeCA}
	ch := nldev.Chardev{Type: nldev.ChardevUverbs, Name: "uverbs1", Dev: unix.Mkdev(231, 193), ABI: 1,
		DriverID: ib.DriverRXE, HasDriverID: true}
	want := Device{Name: "rxe0", Index: 3, NodeType: ib.NodeCA, DriverID: ib.DriverRXE, Uverbs: "uverbs1", Dev: unix.Mkdev(231, 193), ABI: 1}
	if d := NewDevice(nd, &ch); d != want || d.Path() != "/dev/infiniband/uverbs1" {
		t.Errorf("NewDevice = %+v (path %q), want %+v", d, d.Path(), want)
	}
	if d := NewDevice(nd, nil); d != (Device{Name: "rxe0", Index: 3, NodeType: ib.NodeCA}) || d.Path() != "" {
		t.Errorf("NewDevice without a char device = %+v (path %q)", d, d.Path())
	}
}

// TestIntegrationUverbsDeviceByName checks the name lookup against RDMA
// netlink's list, and a name that is not there.
func TestIntegrationUverbsDeviceByName(t *testing.T) {
	devs := devicesForTest(t)
	for _, want := range devs {
		d, err := DeviceByName(want.Name)
		if err != nil || d != want {
			t.Errorf("DeviceByName(%s) = %+v, %v; want %+v", want.Name, d, err, want)
		}
		if d.gone() {
			t.Errorf("%s: a device that is there is gone", d.Name)
		}
	}
	if _, err := DeviceByName("nosuchdev"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DeviceByName(nosuchdev): %v", err)
	}
	if _, err := OpenName("nosuchdev"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenName(nosuchdev): %v", err)
	}
}
