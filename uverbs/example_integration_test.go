package uverbs_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationExamples runs the package's examples, which have no
// Output comment (the host has no RDMA device), on Soft-RoCE and checks
// what they print.
func TestIntegrationExamples(t *testing.T) {
	testenv.RequireRDMA(t)
	// One line per device: name, node GUID, port 1's state and MTU.
	out := testenv.Stdout(t, Example)
	line := regexp.MustCompile(`^rxe\d+ [0-9a-f]{4}(:[0-9a-f]{4}){3} ACTIVE 1024$`)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(out, "rxe0 ") {
		t.Errorf("Example printed %q, want rxe0 first", out)
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("Example printed %q, want name, GUID, ACTIVE 1024", l)
		}
	}
	if out := testenv.Stdout(t, ExamplePD_CreateQP); !regexp.MustCompile(`^qp [1-9]\d*\n$`).MatchString(out) {
		t.Errorf("ExamplePD_CreateQP printed %q, want its QP's number", out)
	}
	const want = "RECV success \"hello, RDMA\"\nSEND success\n"
	if out := testenv.Stdout(t, Example_rcDataPath); out != want {
		t.Errorf("Example_rcDataPath printed %q, want %q", out, want)
	}
}
