package device

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// BenchmarkList is one List of every device (netlink and sysfs joined).
// Run it in the VM with 64 devices:
//
//	go run ./test/vm test -unit=false -devices 64 -- -test.run XXX -test.bench List
func BenchmarkList(b *testing.B) {
	testenv.RequireRDMA(b)
	var n int
	b.ReportAllocs()
	for b.Loop() {
		snap, err := List()
		if err != nil {
			b.Fatal(err)
		}
		n = len(snap.Devices)
	}
	b.ReportMetric(float64(n), "devices")
}
