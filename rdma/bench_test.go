package rdma

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// BenchmarkGetFreeDevices is one GetDevices + FreeDevices cycle. Run it in
// the VM with 64 devices next to BenchmarkLibrdmacmGetFreeDevices:
//
//	go run ./test/vm test -unit=false -devices 64 -- -test.run XXX -test.bench GetFree
func BenchmarkGetFreeDevices(b *testing.B) {
	testenv.RequireRDMA(b)
	warm, err := GetDevices()
	if err != nil {
		b.Fatal(err)
	}
	FreeDevices(warm)
	b.ReportAllocs()
	for b.Loop() {
		l, err := GetDevices()
		if err != nil {
			b.Fatal(err)
		}
		FreeDevices(l)
	}
	b.ReportMetric(float64(len(warm)), "devices")
}

// librdmacmLoop times rdma_get_devices + rdma_free_devices in librdmacm
// itself, through Python's ctypes (the oracle is a C library; the project
// has no cgo). It prints the mean nanoseconds per cycle and the device
// count.
const librdmacmLoop = `
import ctypes, sys, time
l = ctypes.CDLL("librdmacm.so.1")
l.rdma_get_devices.restype = ctypes.c_void_p
l.rdma_get_devices.argtypes = [ctypes.POINTER(ctypes.c_int)]
l.rdma_free_devices.argtypes = [ctypes.c_void_p]
n, c = int(sys.argv[1]), ctypes.c_int()
p = l.rdma_get_devices(ctypes.byref(c))
if not p:
    sys.exit("rdma_get_devices failed")
l.rdma_free_devices(p)
t = time.perf_counter_ns()
for _ in range(n):
    l.rdma_free_devices(l.rdma_get_devices(ctypes.byref(c)))
print((time.perf_counter_ns() - t) / n, c.value)
`

// BenchmarkLibrdmacmGetFreeDevices reports librdmacm's time for the same
// cycle on the same kernel and devices (ns/op from inside the loop, so
// the interpreter's start does not count).
func BenchmarkLibrdmacmGetFreeDevices(b *testing.B) {
	testenv.RequireRDMA(b)
	py := testenv.Oracle(b, "python3")
	out, err := exec.Command(py, "-c", librdmacmLoop, strconv.Itoa(max(b.N, 100))).CombinedOutput()
	if err != nil {
		b.Fatalf("librdmacm loop: %v\n%s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		b.Fatalf("librdmacm loop printed %q", out)
	}
	ns, err1 := strconv.ParseFloat(f[0], 64)
	devs, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || devs == 0 {
		b.Fatalf("librdmacm loop printed %q", out)
	}
	b.ReportMetric(ns, "ns/op")
	b.ReportMetric(float64(devs), "devices")
}
