package uverbs

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The data path's doorbells (POST_SEND with no work requests,
// REQ_NOTIFY_CQ) are write(2)s on the uverbs char device, and they go
// through the scheduler's system-call path like every other call that
// can run long. They can: ib_uverbs_post_send allocates with GFP_KERNEL,
// and on Linux 6.1 rxe runs its requester inside the call, so a 256 KiB
// RDMA WRITE is packetized and sent through the UDP stack before the
// write returns. A raw call there hides a running thread from the
// scheduler: measured in the Soft-RoCE VM (BenchmarkDoorbellRuntime, 2
// vCPUs, GOMAXPROCS=2), a goroutine streaming 256 KiB WRITEs with a raw
// doorbell made runtime.GC() and the stop-the-world wait elsewhere in the
// process about twice as long as with the system-call path, at the same
// throughput (README).
//
// Every wait for an event goes through the netpoller (package
// internal/waitfd), so a waiting goroutine is parked and holds no P, the
// garbage collector never waits on it, and Close and context
// cancellation wake it.
//
// doorbellSyscall is the one system call of the doorbells; tests swap it
// to compare with a raw call.
var doorbellSyscall = unix.Syscall

func doorbellWrite(fd int, b []byte) (int, error) {
	n, _, e := doorbellSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
