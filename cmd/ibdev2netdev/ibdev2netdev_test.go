package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/uverbs"
)

const fixture = "../../device/testdata/connectx"

// connectX is device's ConnectX fixture as List gives it: two devices
// of one PCI function (mlx5_0 on eth0, mlx5_1 on InfiniBand) and a
// subfunction's (mlx5_2), listed out of name order.
func connectX() *device.Snapshot {
	dev := func(idx uint32, name string, parent device.Parent, netdev string) device.Device {
		return device.Device{Device: uverbs.Device{Name: name, Index: idx}, Parent: parent,
			SysfsPath: fixture + "/class/infiniband/" + name, Ports: []device.Port{{Number: 1, Netdev: netdev}}}
	}
	pci := device.Parent{Bus: "pci", Name: "0000:03:00.0"}
	return &device.Snapshot{Devices: []device.Device{
		dev(2, "mlx5_2", device.Parent{Bus: "auxiliary", Name: "mlx5_core.sf.2"}, "enp3s0f0s2"),
		dev(0, "mlx5_0", pci, "eth0"),
		dev(1, "mlx5_1", pci, ""),
	}}
}

// TestLines prints the fixture in the script's two forms: by device
// name, a port without a network device left out; with -v the PCI
// address only where the function has that one device (the script's
// find_pdev compares the whole infiniband directory), MT and the decimal
// PCI device id, NA where sysfs has nothing, the state padded to six.
func TestLines(t *testing.T) {
	fs := sysfs.FS{Root: fixture}
	snap := connectX()
	want := []string{
		"mlx5_0 port 1 ==> eth0 (Up)",
		"mlx5_2 port 1 ==> enp3s0f0s2 (Up)",
	}
	if diff := cmp.Diff(want, lines(snap, fs, false)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	want = []string{
		" mlx5_0 (MT4129 - MT2301X00000) ConnectX-7 HHHL fw 28.39.1002 port 1 (ACTIVE) ==> eth0 (Up)",
		" mlx5_2 (NA - NA)  fw 28.39.1002 port 1 (ACTIVE) ==> enp3s0f0s2 (Up)",
	}
	if diff := cmp.Diff(want, lines(snap, fs, true)); diff != "" {
		t.Errorf("lines -v (-want +got):\n%s", diff)
	}
	// Alone on its function, mlx5_0 gets the PCI address.
	snap.Devices = snap.Devices[:2]
	if got := lines(snap, fs, true)[0]; !strings.HasPrefix(got, "0000:03:00.0 mlx5_0 (MT4129") {
		t.Errorf("mlx5_0 alone on its function: %q", got)
	}
}

func TestLinkState(t *testing.T) {
	fs := sysfs.FS{Root: fixture}
	for nd, want := range map[string]string{"eth0": "Up", "eth0.7": "NA", "nosuch": "NA"} {
		if got := linkState(fs, nd); got != want {
			t.Errorf("linkState(%s) = %s, want %s", nd, got, want)
		}
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, []string{"-h"}); err != nil || out.String() != usage {
		t.Errorf("-h: %q, %v", out.String(), err)
	}
	if err := run(&out, []string{"-x"}); err == nil {
		t.Error("an unknown option was accepted")
	}
}
