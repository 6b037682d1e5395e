package collector

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/internal/sysfs"
)

// sysCounter is one counter file of sysfs: the PMA's port counters
// (ports/N/counters, counters_ext) or a device's hw_counters.
type sysCounter struct {
	name  string
	value uint64
}

// layout is what of a device's sysfs directory does not change while it
// is registered: which counter files it has, and the identity attributes
// node_exporter reports. It is read once per device (and name: a rename
// moves the directory), which spares every scrape the directory listings.
type layout struct {
	name           string // the device name it was read under
	board, fw, hca string // board_id, fw_ver, hca_type; "" when absent
	hw             []string
	pma, pmaExt    map[uint32][]string // by port: counters/, counters_ext/
}

// readLayout reads the layout of the device directory sys.
func readLayout(sys, name string, ports []uint32) *layout {
	l := &layout{name: name, hw: listDir(filepath.Join(sys, "hw_counters")),
		pma: map[uint32][]string{}, pmaExt: map[uint32][]string{}}
	l.board, _ = readString(filepath.Join(sys, "board_id"))
	l.fw, _ = readString(filepath.Join(sys, "fw_ver"))
	l.hca, _ = readString(filepath.Join(sys, "hca_type"))
	for _, p := range ports {
		psys := filepath.Join(sys, "ports", strconv.FormatUint(uint64(p), 10))
		l.pma[p] = listDir(filepath.Join(psys, "counters"))
		l.pmaExt[p] = listDir(filepath.Join(psys, "counters_ext"))
	}
	return l
}

// listDir lists the regular files of dir in name order; none when it
// does not exist.
func listDir(dir string) []string {
	names, _ := sysfs.FS{Root: dir}.Files()
	return names
}

// readCounters reads the counter files names of dir. A file that cannot be
// read or does not hold a number ("N/A (no PMA)" where the driver has no
// PMA, an error the driver returns for one counter) is left out, never a
// failed scrape. The files are opened relative to dir, which spares the
// kernel walking the whole path again for each.
func readCounters(dir string, names []string) []sysCounter {
	if len(names) == 0 {
		return nil
	}
	d, err := sysfs.OpenDir(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	cs := d.Counters(names)
	out := make([]sysCounter, len(cs))
	for i, c := range cs {
		out[i] = sysCounter{name: c.Name, value: c.Value}
	}
	return out
}

// readString reads a one-line sysfs attribute without its newline.
func readString(path string) (string, bool) {
	v, err := sysfs.ReadString(path)
	return v, err == nil
}

// readRate reads ports/N/rate, "100 Gb/sec (4X EDR)", as bytes per second
// (1 Gb/s is 125,000,000 bytes/s).
func readRate(path string) (float64, bool) {
	s, ok := readString(path)
	if !ok {
		return 0, false
	}
	return parseRate(s)
}

// parseRate parses a rate attribute's text.
func parseRate(s string) (float64, bool) {
	num, _, _ := strings.Cut(s, " ")
	gbps, err := strconv.ParseFloat(num, 64)
	rate := gbps * 125e6
	if err != nil || !(rate >= 0) || math.IsInf(rate, 0) {
		return 0, false
	}
	return rate, true
}
