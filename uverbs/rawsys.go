package uverbs

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The data path's doorbells (POST_SEND with no work requests,
// REQ_NOTIFY_CQ) are write(2)s on the uverbs char device that never
// sleep: the kernel only queues work or sets a flag. They bypass the
// scheduler's system-call bookkeeping (RawSyscall), which for a call this
// short costs more than the call. Nothing that can sleep is raw: every
// wait for an event goes through the netpoller (package
// internal/waitfd), so a waiting goroutine is parked and holds no P, the
// garbage collector never waits on it, and Close and context
// cancellation wake it.
//
// History: until December 2026 event waits were a raw poll(2) without a
// timeout, interrupted by the runtime's preemption signal. That was
// within a few percent of rdma-core's blocking read in the Soft-RoCE VM,
// but the scheduler believed the waiter was running: with GOMAXPROCS=1 a
// time.Sleep(1ms) elsewhere took 22 ms and runtime.GC() 110 ms, and more
// waiters than Ps froze the process. No benchmark justifies that.

func rawWrite(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
