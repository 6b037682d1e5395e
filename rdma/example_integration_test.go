package rdma_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/rdma"
)

// TestIntegrationExamples runs ExampleGetDevices, which has no Output
// comment (what it prints depends on the machine), and checks what it
// prints against RDMA netlink: every device's port 1, active, in index
// order; the example frees its list.
func TestIntegrationExamples(t *testing.T) {
	devs := rxetest.Devices(t)
	before := rdma.Outstanding()
	out := testenv.Stdout(t, ExampleGetDevices)
	var want strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&want, "%s 1 ACTIVE 1024\n", d.Name)
	}
	if out != want.String() {
		t.Errorf("ExampleGetDevices printed\n%s\nwant\n%s", out, want.String())
	}
	if n := rdma.Outstanding(); n > before {
		t.Errorf("%d lists outstanding after the example, %d before: it did not free its list", n, before)
	}
}
