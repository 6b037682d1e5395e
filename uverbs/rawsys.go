package uverbs

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The data path's system calls bypass the Go scheduler's syscall
// bookkeeping (RawSyscall): a doorbell write does not block, and an event
// wait is the thread's only work. Through entersyscall each call of a
// few microseconds lets sysmon hand the P to another thread and wake the
// network poller, which measured in the Soft-RoCE VM tripled an
// event-mode round trip (futex, epoll_pwait and nanosleep calls by the
// hundred per thousand round trips). A long wait is still interrupted by
// the runtime's preemption signal (EINTR), so the goroutine yields every
// 10 ms or so.

// rawWaitMS is how long an event wait keeps the P before it blocks the
// ordinary way.
const rawWaitMS = 5

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

// rawPoll waits up to timeout ms (-1: for ever) for fd to be readable.
func rawPoll(fd, timeout int) error {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	_, _, e := unix.RawSyscall(unix.SYS_POLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(timeout))
	if e != 0 {
		return e
	}
	return nil
}
