package device_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationExamples runs the package's examples, which have no
// Output comment (what they print depends on the machine), and checks
// what they print against RDMA netlink: one line per port of every
// device, rxe0 on veth0.
func TestIntegrationExamples(t *testing.T) {
	devs := rxetest.Devices(t)
	lines := strings.Split(strings.TrimSuffix(testenv.Stdout(t, Example), "\n"), "\n")
	var want int
	for _, d := range devs {
		for p := 1; p <= int(d.Ports); p++ {
			want++
			prefix := fmt.Sprintf("%s/%d ACTIVE Ethernet ", d.Name, p)
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) }) {
				t.Errorf("Example printed no line starting %q:\n%s", prefix, strings.Join(lines, "\n"))
			}
		}
	}
	if len(lines) != want || !slices.Contains(lines, "rxe0/1 ACTIVE Ethernet veth0") {
		t.Errorf("Example printed %d lines, want %d with rxe0/1 ACTIVE Ethernet veth0:\n%s", len(lines), want, strings.Join(lines, "\n"))
	}
}
