package rsocket_test

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationExamples runs the package's examples, which have no
// Output comment (the host has no RDMA device), on the VM's rxe0
// (10.77.0.1) and checks what they print: the echo, and the bytes the
// peer wrote into a mapped window.
func TestIntegrationExamples(t *testing.T) {
	testenv.RequireRDMA(t)
	for _, c := range []struct {
		name string
		fn   func()
		want string
	}{
		{"Example", Example, "hello over RDMA\n"},
		{"ExampleConn_Map", ExampleConn_Map, "written by the peer\n"},
	} {
		if got := testenv.Stdout(t, c.fn); got != c.want {
			t.Errorf("%s printed %q, want %q", c.name, got, c.want)
		}
	}
}
