package device_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationNetNSExamples runs the CNI and watch examples and checks
// what they print: a DEL from a namespace that is gone is "ok", an ADD in
// shared mode (the guest's) says to switch to exclusive, and the watch
// lists every device as added.
func TestIntegrationNetNSExamples(t *testing.T) {
	devs := rxetest.Devices(t)
	t.Setenv("RDMA_DEVICE_GUID", devs[0].NodeGUID.String())
	t.Setenv("CNI_NETNS", "/run/netns/rdmst-gone-pod")
	t.Setenv("CNI_COMMAND", "DEL")
	if out := testenv.Stdout(t, ExampleMoveToNetNSByGUID); out != "ok\n" {
		t.Errorf("DEL printed %q, want ok", out)
	}
	ip := testenv.Oracle(t, "ip")
	testenv.Run(t, ip, "netns", "add", "rdmstexpod")
	t.Cleanup(func() { testenv.Run(t, ip, "netns", "del", "rdmstexpod") })
	t.Setenv("CNI_NETNS", "/run/netns/rdmstexpod")
	t.Setenv("CNI_COMMAND", "ADD")
	if out := testenv.Stdout(t, ExampleMoveToNetNSByGUID); !strings.Contains(out, "exclusive mode") {
		t.Errorf("ADD in shared mode printed %q", out)
	}
	out := testenv.Stdout(t, ExampleWatch)
	for _, d := range devs {
		if want := fmt.Sprintf("added %d %s\n", d.Index, d.Name); !strings.Contains(out, want) {
			t.Errorf("ExampleWatch printed %q, want a line %q", out, want)
		}
	}
	if !strings.HasSuffix(out, fmt.Sprintf("%d devices\n", len(devs))) {
		t.Errorf("ExampleWatch printed %q", out)
	}
}
