package uverbs

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The data path's system calls bypass the Go scheduler's system-call
// bookkeeping (RawSyscall): a doorbell write does not block, and an event
// wait is the thread's only work. Through entersyscall, a wait longer than
// a sysmon tick lets sysmon take the P away, and with GOMAXPROCS=1 keeps
// sysmon waking every 20 µs; measured in the Soft-RoCE VM that made an
// event-mode round trip 2.7 times rdma-core's (with two vCPUs and two Ps,
// 1.2–1.7 times; with GOMAXPROCS=2 on one vCPU, where sysmon leaves the P
// alone because another is idle, a blocking read(2) this way was still
// 1.06 times rdma-core's where poll and read were 1.02 in the same run).
// One io_uring READ per wait (the kernel arms poll itself, so a wait is
// one system call) measured 1.20–1.26 times on Linux 6.12, and containers
// commonly forbid io_uring.
//
// A wait is poll(2) with no timeout when there is no deadline: arming and
// cancelling a timer on every wait made a round trip 1.2–1.4 times
// rdma-core's under TCG, where the same poll without a timeout is within a
// few percent. poll is never restarted after a signal handler (signal(7)),
// so the runtime's preemption signal, sent by sysmon to a goroutine that
// has run 10 ms and repeated by a stop-the-world until it succeeds,
// interrupts the wait with EINTR; the waiter then yields (runtime.Gosched)
// and waits again. The garbage collector therefore never waits on an event
// that may not come, and other goroutines get the P as they would from a
// goroutine that computes.

// rawWaitForever is the poll timeout of a wait without deadline: none
// (-1), unless asynchronous preemption is off (GODEBUG=asyncpreemptoff=1),
// when no signal would interrupt the wait: then 10 ms, the scheduler's own
// time slice.
var rawWaitForever = waitForever(os.Getenv("GODEBUG"))

func waitForever(godebug string) int {
	for _, kv := range strings.Split(godebug, ",") {
		if strings.TrimSpace(kv) == "asyncpreemptoff=1" {
			return 10
		}
	}
	return -1
}

func rawWrite(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawRead(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawPoll waits up to timeout ms (-1: for ever) for fd to be readable, or
// until a signal (EINTR).
func rawPoll(fd, timeout int) error {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	_, _, e := unix.RawSyscall(unix.SYS_POLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(timeout))
	if e != 0 {
		return e
	}
	return nil
}
