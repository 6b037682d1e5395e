// Command show_gids is a static drop-in for NVIDIA's show_gids script
// (MLNX_OFED, DOCA): every valid entry of every RDMA port's GID table,
// with its index, the IPv4 address of an IPv4-mapped GID, the RoCE
// version and the network device, in the script's tab-separated table
// with its header and a closing n_gids_found=N line.
//
//	show_gids [DEV]
//
// Like the script it reads sysfs (class/infiniband/DEV/ports/P/gids/I and
// gid_attrs/{types,ndevs}/I), through the module's sysfs reader; devices,
// ports and indices come in ls order, and the empty GIDs (all zero, and
// fe80:: with a zero interface id) are left out.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/internal/sysfs"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run is the whole command.
func run(stdout io.Writer, args []string) error { return show(stdout, sysfs.Sys, args) }

// Empty GIDs the script leaves out.
const (
	zeroGID      = "0000:0000:0000:0000:0000:0000:0000:0000"
	zeroLinkLoc  = "fe80:0000:0000:0000:0000:0000:0000:0000"
	header       = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
	headerRule   = "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"
	ipv4Suffixed = "  \t" // after the IPv4 address
)

// show prints the table of the sysfs tree fs; args may name one device.
func show(stdout io.Writer, fs sysfs.FS, args []string) error {
	var devs []string
	switch {
	case len(args) > 0 && args[0] != "":
		devs = []string{args[0]}
	default:
		var err error
		if devs, err = fs.List("class", "infiniband"); err != nil {
			return fmt.Errorf("show_gids: %w", err)
		}
	}
	w := bufio.NewWriter(stdout)
	w.WriteString(header)
	w.WriteString(headerRule)
	n := 0
	for _, d := range devs {
		ports, err := fs.List("class", "infiniband", d, "ports")
		if err != nil {
			fmt.Fprintf(os.Stderr, "ls: cannot access '%s': %v\n", fs.Path("class", "infiniband", d, "ports"), err)
			continue
		}
		for _, p := range ports {
			dir := []string{"class", "infiniband", d, "ports", p}
			idx, _ := fs.List(append(dir, "gids")...)
			for _, i := range idx {
				gid, err := fs.Read(append(dir, "gids", i)...)
				if err != nil || gid == zeroGID || gid == zeroLinkLoc {
					continue
				}
				ndev, _ := fs.Read(append(dir, "gid_attrs", "ndevs", i)...)
				typ, _ := fs.Read(append(dir, "gid_attrs", "types", i)...)
				ver := version(typ)
				if ip, ok := ipv4(gid); ok {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s%s%s\t%s\n", d, p, i, gid, ip, ipv4Suffixed, ver, ndev)
				} else {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t\t\t%s\t%s\n", d, p, i, gid, ver, ndev)
				}
				n++
			}
		}
	}
	fmt.Fprintf(w, "n_gids_found=%d\n", n)
	return w.Flush()
}

// version is the script's `grep -o "[Vv].*"` of the GID type: "v1" of
// "IB/RoCE v1", "v2" of "RoCE v2", nothing for an IB port (no type).
func version(typ string) string {
	if i := strings.IndexAny(typ, "Vv"); i >= 0 {
		return typ[i:]
	}
	return ""
}

// ipv4 is the address of a GID whose first group is 0000 (an
// IPv4-mapped one, ::ffff:a.b.c.d), from its last two groups, as the
// script prints it.
func ipv4(gid string) (string, bool) {
	if !strings.HasPrefix(gid, "0000:") || len(gid) != len(zeroGID) {
		return "", false
	}
	var b [4]uint64
	for k, off := range []int{30, 32, 35, 37} {
		v, err := strconv.ParseUint(gid[off:off+2], 16, 8)
		if err != nil {
			return "", false
		}
		b[k] = v
	}
	return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3]), true
}
