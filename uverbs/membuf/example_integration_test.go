package membuf_test

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationExamples runs ExampleBuffer_Register, which has no
// Output comment (the host has no RDMA device), on Soft-RoCE and checks
// what it prints.
func TestIntegrationExamples(t *testing.T) {
	testenv.RequireRDMA(t)
	const want = "sge length: 65536\nclose while registered: true\nclose after: <nil>\n"
	if got := testenv.Stdout(t, ExampleBuffer_Register); got != want {
		t.Errorf("ExampleBuffer_Register printed %q, want %q", got, want)
	}
}
