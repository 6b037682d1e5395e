package rsocket

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/rdma"
)

// checkNoLeaks is rxetest.NoLeaks once the device cache, which opens its
// contexts once per process, is filled.
func checkNoLeaks(t *testing.T, dev *uint32) {
	t.Helper()
	devs, err := rdma.GetDevices()
	if err != nil {
		t.Fatal(err)
	}
	rdma.FreeDevices(devs)
	rxetest.NoLeaks(t, dev)
}
