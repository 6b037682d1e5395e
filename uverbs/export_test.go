package uverbs

import "golang.org/x/sys/unix"

// SetRawDoorbell makes the doorbells raw system calls (true) or calls
// through the scheduler (false), for BenchmarkDoorbellRuntime's
// comparison; it returns a function that restores the default.
func SetRawDoorbell(raw bool) (restore func()) {
	old := doorbellSyscall
	if raw {
		doorbellSyscall = unix.RawSyscall
	} else {
		doorbellSyscall = unix.Syscall
	}
	return func() { doorbellSyscall = old }
}
