package uverbs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// Device is an RDMA device that has a uverbs char device: one that user
// space can open.
type Device struct {
	Name     string      // the RDMA device's name, e.g. "rxe0"
	Index    int64       // its RDMA netlink index; -1 when enumerated through sysfs
	NodeGUID ib.GUID     // node GUID
	NodeType ib.NodeType // node type
	Uverbs   string      // the char device's name, e.g. "uverbs0"
	Dev      uint64      // the char device's dev_t (unix.Major, unix.Minor)
	ABI      uint32      // the driver's uverbs ABI version

	// DriverID identifies the kernel driver; every ioctl carries it.
	DriverID ib.DriverID
}

// Path is the device node, /dev/infiniband/<Uverbs>.
func (d Device) Path() string { return filepath.Join(devDir, d.Uverbs) }

// Transport is the device's transport as rdma-core names it, derived from
// its node type.
func (d Device) Transport() Transport { return transportOf(d.NodeType) }

// Paths of the kernel's interfaces; tests point them elsewhere.
var (
	devDir         = "/dev/infiniband"
	sysInfiniband  = "/sys/class/infiniband"
	sysUverbsClass = "/sys/class/infiniband_verbs"
)

// Devices returns the RDMA devices of the caller's network namespace that
// have a uverbs char device, in RDMA netlink's order (by index). It asks
// RDMA netlink first (GET, then GET_CHARDEV "uverbs" per device), falls
// back to sysfs for a device whose char device netlink does not report,
// and to sysfs alone (/sys/class/infiniband_verbs) when the kernel has no
// RDMA netlink. Devices without a device node are left out, as
// libibverbs does.
func Devices() ([]Device, error) {
	c, err := nldev.Dial()
	if err != nil {
		if errors.Is(err, nldev.ErrNoRDMA) {
			return sysfsDevices()
		}
		return nil, wrap("", "list devices", err)
	}
	defer c.Close()
	devs, err := c.Devices()
	if err != nil {
		return nil, wrap("", "list devices", err)
	}
	var out []Device
	for _, d := range devs {
		dev := Device{Name: d.Name, Index: int64(d.Index), NodeGUID: d.NodeGUID, NodeType: d.NodeType}
		ch, err := c.UverbsChardev(d.Index)
		if err == nil {
			dev.Uverbs, dev.Dev, dev.ABI = ch.Name, ch.Dev, uint32(ch.ABI)
			if ch.HasDriverID {
				dev.DriverID = ch.DriverID
			} else {
				dev.DriverID = driverFromSysfs(d.Name)
			}
		} else if !fillFromSysfs(&dev) {
			continue
		}
		if dev.Uverbs == "" || !nodeExists(dev) {
			continue
		}
		out = append(out, dev)
	}
	return out, nil
}

// DeviceByName returns the device called name, with an error matching
// os.ErrNotExist when there is none.
func DeviceByName(name string) (Device, error) {
	devs, err := Devices()
	if err != nil {
		return Device{}, err
	}
	for _, d := range devs {
		if d.Name == name {
			return d, nil
		}
	}
	return Device{}, &Error{Dev: name, Op: "find device", Err: fmt.Errorf("no uverbs device %q: %w", name, os.ErrNotExist)}
}

func nodeExists(d Device) bool {
	_, err := os.Stat(d.Path())
	return err == nil
}

// sysfsDevices enumerates /sys/class/infiniband_verbs/uverbs*.
func sysfsDevices() ([]Device, error) {
	if abi, err := readSysfsInt(filepath.Join(sysUverbsClass, "abi_version")); err == nil && (abi < 3 || abi > 6) {
		return nil, &Error{Op: "list devices", Err: fmt.Errorf("uverbs ABI %d is outside 3-6: %w", abi, ErrNotSupported)}
	}
	ents, err := os.ReadDir(sysUverbsClass)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, wrap("", "list devices", err)
	}
	var out []Device
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "uverbs") {
			continue
		}
		dir := filepath.Join(sysUverbsClass, e.Name())
		name, err := readSysfs(filepath.Join(dir, "ibdev"))
		if err != nil {
			continue
		}
		dev := Device{Name: name, Index: -1}
		if !fillUverbs(&dev, dir) {
			continue
		}
		fillNode(&dev)
		if nodeExists(dev) {
			out = append(out, dev)
		}
	}
	sort.Slice(out, func(i, j int) bool { return uverbsNum(out[i].Uverbs) < uverbsNum(out[j].Uverbs) })
	return out, nil
}

func uverbsNum(s string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(s, "uverbs"))
	return n
}

// fillFromSysfs finds a netlink-listed device's uverbs char device in
// /sys/class/infiniband/<name>/device/infiniband_verbs/.
func fillFromSysfs(d *Device) bool {
	ents, err := os.ReadDir(filepath.Join(sysInfiniband, d.Name, "device", "infiniband_verbs"))
	if err != nil {
		return false
	}
	for _, e := range ents {
		dir := filepath.Join(sysUverbsClass, e.Name())
		if ib, err := readSysfs(filepath.Join(dir, "ibdev")); err == nil && ib == d.Name {
			return fillUverbs(d, dir)
		}
	}
	return false
}

// fillUverbs reads a /sys/class/infiniband_verbs/uverbsN directory.
func fillUverbs(d *Device, dir string) bool {
	d.Uverbs = filepath.Base(dir)
	majmin, err := readSysfs(filepath.Join(dir, "dev"))
	if err != nil {
		return false
	}
	maj, min, ok := strings.Cut(majmin, ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return false
	}
	d.Dev = unix.Mkdev(uint32(ma), uint32(mi))
	abi, err := readSysfsInt(filepath.Join(dir, "abi_version"))
	if err != nil {
		return false
	}
	d.ABI = uint32(abi)
	d.DriverID = driverFromSysfs(d.Name)
	return true
}

// fillNode reads node_guid and node_type of a device from sysfs.
func fillNode(d *Device) {
	if s, err := readSysfs(filepath.Join(sysInfiniband, d.Name, "node_guid")); err == nil {
		if g, err := ib.ParseGUID(s); err == nil {
			d.NodeGUID = g
		}
	}
	if s, err := readSysfs(filepath.Join(sysInfiniband, d.Name, "node_type")); err == nil {
		n, _, _ := strings.Cut(s, ":")
		if v, err := strconv.Atoi(n); err == nil {
			d.NodeType = ib.NodeType(v)
		}
	}
}

// driverFromSysfs guesses the driver id when netlink does not give it:
// from the bound kernel driver's name, else from the device name's
// prefix (rdma-core matches rxe and siw by name).
func driverFromSysfs(name string) ib.DriverID {
	if target, err := os.Readlink(filepath.Join(sysInfiniband, name, "device", "driver")); err == nil {
		if id, ok := driverByName(filepath.Base(target)); ok {
			return id
		}
	}
	for _, p := range []string{"rxe", "siw"} {
		if strings.HasPrefix(name, p) {
			id, _ := driverByName(p)
			return id
		}
	}
	return ib.DriverUnknown
}

func driverByName(s string) (ib.DriverID, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "rdma_"), "_core")
	if s == "mlx5" {
		return ib.DriverMLX5, true
	}
	for id := ib.DriverID(1); id < 64; id++ {
		if id.String() == s {
			return id, true
		}
	}
	return ib.DriverUnknown, false
}

func readSysfs(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n"), nil
}

func readSysfsInt(path string) (int, error) {
	s, err := readSysfs(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(s))
}
