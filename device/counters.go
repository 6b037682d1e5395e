package device

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/rdmastack/rdmastack/internal/sysfs"
)

// Counter is one counter of a device or port, by its sysfs name.
type Counter struct {
	Name  string
	Value uint64
}

// Counters is a set of counters in name order.
type Counters []Counter

// Get returns the value of the counter name.
func (c Counters) Get(name string) (uint64, bool) {
	i, ok := slices.BinarySearchFunc(c, name, func(c Counter, n string) int { return cmp.Compare(c.Name, n) })
	if !ok {
		return 0, false
	}
	return c[i].Value, true
}

// PortCounters are one port's counters as sysfs has them.
type PortCounters struct {
	Port uint32
	// PMA is the port's Performance Management counters (ports/N/counters
	// and, where the kernel has it, counters_ext): port_xmit_data,
	// port_rcv_packets, symbol_error, ... Empty for a driver without a
	// PMA (rxe, siw: their files say "N/A (no PMA)").
	PMA Counters
	// HW is the driver's statistics of the port (ports/N/hw_counters):
	// what `rdma stat show link` lists.
	HW Counters
}

// PortCounters reads the counters of port. A port the device does not
// have is an error matching ErrUnknownPort; a counter the driver cannot
// read is left out.
func (d Device) PortCounters(port uint32) (PortCounters, error) {
	if !slices.ContainsFunc(d.Ports, func(p Port) bool { return p.Number == port }) {
		return PortCounters{}, fmt.Errorf("device: counters of %s port %d: %w", d.Name, port, ErrUnknownPort)
	}
	dir := filepath.Join(d.SysfsPath, "ports", strconv.FormatUint(uint64(port), 10))
	pma := append(counters(filepath.Join(dir, "counters")), counters(filepath.Join(dir, "counters_ext"))...)
	slices.SortFunc(pma, func(a, b Counter) int { return cmp.Compare(a.Name, b.Name) })
	return PortCounters{Port: port, PMA: pma, HW: counters(filepath.Join(dir, "hw_counters"))}, nil
}

// HWCounters reads the device's own statistics (hw_counters of the
// device's directory), which some drivers keep beside their ports'; none
// when the driver has none.
func (d Device) HWCounters() Counters { return counters(filepath.Join(d.SysfsPath, "hw_counters")) }

func counters(dir string) Counters {
	var out Counters
	for _, c := range sysfs.Counters(dir) {
		if c.Name == "lifespan" {
			continue // hw_counters' refresh interval in ms, a setting
		}
		out = append(out, Counter(c))
	}
	return out
}
