package nldev

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
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

// BenchmarkDecodeDevices decodes 64 captured GET replies: the Go side of
// a 64-device dump, without the kernel.
func BenchmarkDecodeDevices(b *testing.B) {
	var msgs [][]byte
	for _, m := range fixtures(b, "dev-dump")["6.12.117+deb12-amd64"] {
		msgs = append(msgs, m.Data)
	}
	for len(msgs) < 64 {
		msgs = append(msgs, msgs...)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs[:64] {
			if _, err := decodeDevice(m); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkInventory is every device with its ports and char devices, in
// batches.
func BenchmarkInventory(b *testing.B) {
	testenv.RequireRDMA(b)
	c, err := Dial()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Inventory(); err != nil {
			b.Fatal(err)
		}
	}
}
