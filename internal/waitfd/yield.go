package waitfd

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Yield is a polling loop's pause between looks: every other goroutine
// runs first (runtime.Gosched), then every other thread the machine has
// runnable on this CPU (sched_yield(2)). The second matters where the
// thing polled for is made by another process or by the kernel's own
// threads on the same CPU — the peer of a connection, rxe's softirq
// (6.1) or work queue (6.12): the kernel takes the CPU from a thread
// busy in user mode only at its next tick, so a loop that makes no
// system call keeps them waiting for up to a tick while it polls for
// their result. sched_yield goes through the runtime's system-call path,
// since the kernel may run others for a time slice before it returns;
// with nothing else runnable it returns at once.
func Yield() {
	runtime.Gosched()
	syscall.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
}
