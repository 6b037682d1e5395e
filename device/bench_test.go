package device

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// BenchmarkList is one List of every device, as a program calls it again
// and again: after the first, from the last snapshot while the kernel's
// events say nothing changed (the ports of drivers without such events are
// read every time). Run it in the VM with 64 devices, next to rdma's
// BenchmarkLibrdmacmGetFreeDevices:
//
//	go run ./test/vm test -unit=false -devices 64 -scale "" -- -test.run XXX -test.bench 'List|GetFree'
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

// BenchmarkListFresh is what every List cost before it kept its snapshot,
// and still costs where no event can be had: the whole inventory from
// netlink and sysfs.
func BenchmarkListFresh(b *testing.B) {
	testenv.RequireRDMA(b)
	nl, err := nldev.Dial()
	if err != nil {
		b.Fatal(err)
	}
	defer nl.Close()
	var n int
	b.ReportAllocs()
	for b.Loop() {
		snap, err := list(nl, system)
		if err != nil {
			b.Fatal(err)
		}
		n = len(snap.Devices)
	}
	b.ReportMetric(float64(n), "devices")
}
