package device_test

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationPluginExamples runs the device plugin examples, which
// have no Output comment, and checks what they print: each char device
// line against stat of its node, rxe0 behind veth0 with its counters, no
// parent for a PCI address or subfunction the VM does not have.
func TestIntegrationPluginExamples(t *testing.T) {
	devs := rxetest.Devices(t)
	out := testenv.Stdout(t, ExampleSnapshot_CharDevicesOf)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		var dev, kind, path string
		var maj, min uint32
		if _, err := fmt.Sscanf(l, "%s %s %s c %d:%d rwm", &dev, &kind, &path, &maj, &min); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil || unix.Major(st.Rdev) != maj || unix.Minor(st.Rdev) != min {
			t.Errorf("line %q: stat %d:%d, %v", l, unix.Major(st.Rdev), unix.Minor(st.Rdev), err)
		}
		seen[dev+" "+kind] = true
	}
	for _, d := range devs {
		for _, k := range []string{"uverbs", "rdma_cm"} {
			if !seen[d.Name+" "+k] {
				t.Errorf("no %s line for %s:\n%s", k, d.Name, out)
			}
		}
	}
	if out := testenv.Stdout(t, ExampleSnapshot_PortsOfNetdev); out != "veth0: rxe0 port 1 (port), sent_pkts counted: true\n" {
		t.Errorf("ExampleSnapshot_PortsOfNetdev printed %q", out)
	}
	if out := testenv.Stdout(t, ExampleSnapshot_DevicesByPCI); out != "0000:03:00.0: no RDMA device\nmlx5_core.sf.2: no RDMA device\n" {
		t.Errorf("ExampleSnapshot_DevicesByPCI printed %q", out)
	}
}
