package uverbs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testenv"
)

// fakeSysfs lays out /sys/class/infiniband{,_verbs} and /dev/infiniband
// under a temporary directory.
func fakeSysfs(t *testing.T) {
	t.Helper()
	root := t.TempDir()
	oldDev, oldIB, oldUV := devDir, sysInfiniband, sysUverbsClass
	devDir, sysInfiniband, sysUverbsClass = filepath.Join(root, "dev"), filepath.Join(root, "ib"), filepath.Join(root, "uv")
	t.Cleanup(func() { devDir, sysInfiniband, sysUverbsClass = oldDev, oldIB, oldUV })
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(sysUverbsClass, "abi_version"), "6\n")
	for i, name := range []string{"siw_a", "rxe_b"} {
		uv := filepath.Join(sysUverbsClass, "uverbs"+string(rune('0'+9-i*8)))
		write(filepath.Join(uv, "ibdev"), name+"\n")
		write(filepath.Join(uv, "dev"), "231:19"+string(rune('2'+i))+"\n")
		write(filepath.Join(uv, "abi_version"), "2\n")
		write(filepath.Join(sysInfiniband, name, "node_guid"), "0250:56ff:fe8a:1b2c\n")
		write(filepath.Join(sysInfiniband, name, "node_type"), "1: CA\n")
		write(filepath.Join(devDir, filepath.Base(uv)), "")
	}
	// A uverbs device without a device node is left out.
	write(filepath.Join(sysUverbsClass, "uverbs5", "ibdev"), "gone\n")
	write(filepath.Join(sysUverbsClass, "uverbs5", "dev"), "231:197\n")
	write(filepath.Join(sysUverbsClass, "uverbs5", "abi_version"), "1\n")
}

func TestSysfsDevices(t *testing.T) {
	fakeSysfs(t)
	devs, err := sysfsDevices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 {
		t.Fatalf("%d devices: %+v", len(devs), devs)
	}
	// Sorted by uverbs number: rxe_b is uverbs1, siw_a uverbs9.
	b, a := devs[0], devs[1]
	if b.Name != "rxe_b" || b.Uverbs != "uverbs1" || b.Index != -1 || b.DriverID != ib.DriverRXE || b.ABI != 2 ||
		b.Dev != unix.Mkdev(231, 193) || b.NodeType != ib.NodeCA || b.NodeGUID != ib.GUIDFromUint64(0x025056fffe8a1b2c) {
		t.Errorf("rxe_b: %+v", b)
	}
	if a.Name != "siw_a" || a.DriverID != ib.DriverSIW || a.Transport() != TransportIB {
		t.Errorf("siw_a: %+v", a)
	}
	d := Device{Name: "rxe_b"}
	if !fillFromSysfs(&d) {
		// The per-device link is device/infiniband_verbs/uverbsN.
		if err := os.MkdirAll(filepath.Join(sysInfiniband, "rxe_b", "device", "infiniband_verbs", "uverbs1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if !fillFromSysfs(&d) || d.Uverbs != "uverbs1" {
			t.Fatalf("fillFromSysfs: %+v", d)
		}
	}
	os.WriteFile(filepath.Join(sysUverbsClass, "abi_version"), []byte("7\n"), 0o644)
	if _, err := sysfsDevices(); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("class ABI 7: %v", err)
	}
}

// TestIntegrationUverbsSysfsEnumeration checks that the sysfs fallback
// finds what RDMA netlink reports.
func TestIntegrationUverbsSysfsEnumeration(t *testing.T) {
	devs := devicesForTest(t)
	fs, err := sysfsDevices()
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(devs) {
		t.Fatalf("sysfs finds %d devices, netlink %d", len(fs), len(devs))
	}
	byName := map[string]Device{}
	for _, d := range fs {
		byName[d.Name] = d
	}
	for _, d := range devs {
		s, ok := byName[d.Name]
		s.Index = d.Index
		if !ok || s != d {
			t.Errorf("sysfs %+v, netlink %+v", s, d)
		}
	}
	if _, err := DeviceByName("nosuchdev"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DeviceByName(nosuchdev): %v", err)
	}
	if _, err := OpenName("nosuchdev"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenName(nosuchdev): %v", err)
	}
	testenv.RequireRDMA(t)
}
