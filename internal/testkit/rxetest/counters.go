package rxetest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// hwCounters is where the guest's RDMA devices keep port 1's hardware
// counters (rxe's: sent_pkts, rcvd_seq_err, completer_retry_err, …).
const hwCounters = "/sys/class/infiniband/*/ports/1/hw_counters/"

// Counters is the guest's RDMA devices' non-zero hardware counters
// (HWCounters) as "name=value" words, for a log; "" where they could
// not be read.
func Counters() string {
	m, err := readHWCounters()
	if err != nil {
		return ""
	}
	var s []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if m[name] != 0 {
			s = append(s, name+"="+strconv.FormatUint(m[name], 10))
		}
	}
	return strings.Join(s, " ")
}

// HWCounters is the guest's RDMA devices' hardware counters of port 1,
// each summed over the devices: rxe's sent_pkts, rcvd_seq_err,
// completer_retry_err, rcvd_rnr_err, … (none for a device without).
// A counter that cannot be read fails t.
func HWCounters(t testing.TB) map[string]uint64 {
	t.Helper()
	m, err := readHWCounters()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readHWCounters() (map[string]uint64, error) {
	files, _ := filepath.Glob(hwCounters + "*")
	m := map[string]uint64{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		m[filepath.Base(f)] += v
	}
	return m, nil
}

// Retransmissions is the guest's rxe devices' count of retransmission
// rounds (rxe's completer_retry_err counter: a sequence NAK or the ACK
// timer sent the requester back); 0 with no rxe device, as on the siw
// pairs, where TCP retransmits and siw counts nothing.
func Retransmissions(t testing.TB) uint64 {
	t.Helper()
	return HWCounters(t)["completer_retry_err"]
}
