package collector

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
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
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(dfd)
	out := make([]sysCounter, 0, len(names))
	for _, n := range names {
		s, ok := readAt(dfd, n)
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			out = append(out, sysCounter{name: n, value: v})
		}
	}
	return out
}

// readString reads a one-line sysfs attribute without its newline.
func readString(path string) (string, bool) { return readAt(unix.AT_FDCWD, path) }

// readAt reads the attribute name (relative to the directory dfd, or
// absolute) in three system calls, open, one read and close: sysfs hands
// a whole attribute to the first read, and a scrape reads hundreds.
func readAt(dfd int, name string) (string, bool) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	var buf [256]byte
	for {
		n, err := unix.Read(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n < 0 {
			return "", false
		}
		return strings.TrimSpace(string(buf[:n])), true
	}
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
