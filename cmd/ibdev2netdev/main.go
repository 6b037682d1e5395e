// Command ibdev2netdev is a static drop-in for NVIDIA's ibdev2netdev
// script (MLNX_OFED, DOCA): which network device each RDMA port is on,
// one line per port and network device,
//
//	mlx5_0 port 1 ==> eth0 (Up)
//
// and with -v the PCI address, the PCI device id, the part number and
// description from the VPD, the firmware and the port state as well:
//
//	0000:03:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEAT) ConnectX-7     fw 28.39.1002 port 1 (ACTIVE) ==> eth0 (Up)
//
// A field sysfs does not have prints as the script prints it: NA, or
// nothing for the PCI address of a device that has no PCI function of its
// own (rxe, siw, a subfunction). The link state is the network device's
// carrier: Up, Down, or NA where it has no carrier attribute.
//
// The ports come from package device: a RoCE port's own network device
// as the script finds it, its GID table's first entry's (RDMA netlink's
// for an iWARP port, whose GIDs have no attributes), an
// InfiniBand port's IPoIB interfaces (Snapshot.PortsOfNetdev), in
// device name, port and interface order.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/uverbs"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

const usage = "Usage: ibdev2netdev [-v|--verbose] [-h|--help]\n"

// run is the whole command.
func run(stdout io.Writer, args []string) error {
	verbose := false
	for _, a := range args {
		switch a {
		case "-v", "--verbose":
			verbose = true
		case "-h", "--help":
			_, err := io.WriteString(stdout, usage)
			return err
		default:
			return fmt.Errorf("ibdev2netdev: unknown option %q\n%s", a, strings.TrimSuffix(usage, "\n"))
		}
	}
	snap, err := device.List()
	if err != nil {
		return fmt.Errorf("ibdev2netdev: %w", err)
	}
	w := bufio.NewWriter(stdout)
	for _, l := range lines(snap, sysfs.Sys, verbose) {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	return w.Flush()
}

// line is one port and network device.
type line struct {
	dev    device.Device
	port   device.Port
	netdev string
}

// lines returns the output's lines.
func lines(snap *device.Snapshot, fs sysfs.FS, verbose bool) []string {
	devs := slices.Clone(snap.Devices)
	slices.SortFunc(devs, func(a, b device.Device) int { return strings.Compare(a.Name, b.Name) })
	ipoib := ipoibNetdevs(snap, fs)
	var out []string
	for _, d := range devs {
		for _, p := range d.Ports {
			var netdevs []string
			if nd := portNetdev(d, p); nd != "" {
				netdevs = append(netdevs, nd)
			}
			netdevs = append(netdevs, ipoib[portKey{d.Index, p.Number}]...)
			for _, nd := range netdevs {
				l := line{d, p, nd}
				if verbose {
					out = append(out, l.verbose(snap, fs))
				} else {
					out = append(out, fmt.Sprintf("%s port %d ==> %s (%s)", d.Name, p.Number, nd, linkState(fs, nd)))
				}
			}
		}
	}
	return out
}

// portNetdev is an Ethernet port's network device as the script finds
// it, the netdev of the port's first GID (none while the kernel has
// removed it: a port whose netdev went away), else RDMA netlink's (a
// port without a GID table of netdevs, iWARP).
func portNetdev(d device.Device, p device.Port) string {
	// iWARP ports have a GID table without attributes: the kernel
	// answers EINVAL for each.
	if d.Transport() == uverbs.TransportIWARP {
		return p.Netdev
	}
	port := strconv.FormatUint(uint64(p.Number), 10)
	nd, err := sysfs.ReadString(d.SysfsPath + "/ports/" + port + "/gid_attrs/ndevs/0")
	switch {
	case err == nil:
		return nd
	case p.Netdev != "" && os.IsNotExist(err):
		if _, err := os.Stat(d.SysfsPath + "/ports/" + port + "/gid_attrs"); os.IsNotExist(err) {
			return p.Netdev
		}
	}
	return ""
}

type portKey struct{ dev, port uint32 }

// ipoibNetdevs maps each InfiniBand port to its IPoIB interfaces, in
// name order.
func ipoibNetdevs(snap *device.Snapshot, fs sysfs.FS) map[portKey][]string {
	out := map[portKey][]string{}
	names, _ := fs.List("class", "net")
	for _, n := range names {
		if t, err := fs.ReadUint("class", "net", n, "type"); err != nil || t != 32 {
			continue
		}
		nps, err := snap.PortsOfNetdev(n)
		if err != nil {
			continue
		}
		for _, np := range nps {
			if np.Via == device.ViaIPoIB {
				k := portKey{np.Device.Index, np.Port.Number}
				out[k] = append(out[k], n)
			}
		}
	}
	return out
}

// linkState is the script's: the carrier attribute, 1 is Up, anything
// else (a down device's carrier cannot be read) Down, NA without one.
func linkState(fs sysfs.FS, netdev string) string {
	v, err := fs.Read("class", "net", netdev, "carrier")
	switch {
	case err == nil && v == "1":
		return "Up"
	case err == nil || !os.IsNotExist(err):
		return "Down"
	}
	return "NA"
}

// verbose is the -v line.
func (l line) verbose(snap *device.Snapshot, fs sysfs.FS) string {
	d := l.dev
	pci := ""
	if d.Parent.Bus == "pci" {
		// The script finds the PCI function whose infiniband directory
		// lists this device alone.
		if devs, err := snap.DevicesByPCI(d.Parent.Name); err == nil && len(devs) == 1 {
			pci = d.Parent.Name
		}
	}
	read := func(elem ...string) (string, bool) {
		v, err := sysfs.ReadString(strings.Join(append([]string{d.SysfsPath}, elem...), "/"))
		return v, err == nil || !os.IsNotExist(err)
	}
	devid := "NA"
	if v, ok := read("device", "device"); ok {
		n, _ := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
		devid = fmt.Sprintf("MT%d", n)
	}
	fw := "NA"
	if v, ok := read("fw_ver"); ok {
		fw = v
	}
	state := "NA"
	if v, ok := read("ports", strconv.FormatUint(uint64(l.port.Number), 10), "state"); ok {
		f := strings.Fields(v)
		s := ""
		if len(f) > 1 {
			s = f[1]
		}
		state = fmt.Sprintf("%-6s", s)
	}
	desc, part := "", "NA"
	var vpd [4096]byte
	if n, err := sysfs.ReadRaw(d.SysfsPath+"/device/vpd", vpd[:]); err == nil || !os.IsNotExist(err) {
		desc, part = vpdFields(vpd[:n])
	}
	return fmt.Sprintf("%s %s (%s - %s) %s fw %s port %d (%s) ==> %s (%s)",
		pci, d.Name, devid, part, desc, fw, l.port.Number, state, l.netdev, linkState(fs, l.netdev))
}

// vpdFields are the script's description (the VPD's first printable
// string, padded to 15) and part number (the first word of its fourth,
// padded to 11), strings(1) style: runs of at least four printable
// characters, the colons read as blanks.
func vpdFields(vpd []byte) (desc, part string) {
	var strs []string
	var cur []byte
	flush := func() {
		if len(cur) >= 4 {
			strs = append(strs, string(cur))
		}
		cur = cur[:0]
	}
	for _, c := range vpd {
		if c == ':' {
			c = ' '
		}
		if c == '\t' || (c >= 0x20 && c < 0x7f) {
			cur = append(cur, c)
			continue
		}
		flush()
	}
	flush()
	if len(strs) == 0 {
		return fmt.Sprintf("%-15s", ""), fmt.Sprintf("%-11s", "")
	}
	desc = fmt.Sprintf("%-15s", strings.Join(strings.Fields(strs[0]), " "))
	fourth := strs[min(3, len(strs)-1)]
	if f := strings.Fields(fourth); len(f) > 0 {
		part = fmt.Sprintf("%-11s", f[0])
	} else {
		part = fmt.Sprintf("%-11s", "")
	}
	return desc, part
}
