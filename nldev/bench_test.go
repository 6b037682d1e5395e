package nldev

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// BenchmarkDevices is one RDMA_NLDEV_CMD_GET dump, decoded.
func BenchmarkDevices(b *testing.B) {
	testenv.RequireRDMA(b)
	c, err := Dial()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Devices(); err != nil {
			b.Fatal(err)
		}
	}
}
