package collector

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// sysCounter is one counter file of sysfs: the PMA's port counters
// (ports/N/counters, counters_ext) or a device's hw_counters.
type sysCounter struct {
	name  string
	value uint64
}

// readCounterDir reads every counter file of dir, in name order. A missing
// directory is no counters; a file that cannot be read or does not hold a
// number ("N/A (no PMA)" where the driver has no PMA, an error the driver
// returns for one counter) is left out, never a failed scrape.
func readCounterDir(dir string) []sysCounter {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []sysCounter
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if v, ok := readUint(filepath.Join(dir, e.Name())); ok {
			out = append(out, sysCounter{name: e.Name(), value: v})
		}
	}
	slices.SortFunc(out, func(a, b sysCounter) int { return strings.Compare(a.name, b.name) })
	return out
}

// readUint reads a file holding one decimal number.
func readUint(path string) (uint64, bool) {
	s, ok := readString(path)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// readString reads a one-line sysfs attribute without its newline.
func readString(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
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

// readStateID reads a "4: ACTIVE" attribute's number (ports/N/state,
// phys_state).
func readStateID(path string) (float64, bool) {
	s, ok := readString(path)
	if !ok {
		return 0, false
	}
	return parseStateID(s)
}

// parseStateID parses a state attribute's text.
func parseStateID(s string) (float64, bool) {
	id, _, _ := strings.Cut(s, ":")
	v, err := strconv.ParseUint(strings.TrimSpace(id), 10, 32)
	return float64(v), err == nil
}
