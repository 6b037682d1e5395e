package uverbs

import (
	"os"

	"golang.org/x/sys/unix"
)

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

// UVERBS_BENCH_RAW_DOORBELL=1 makes every benchmark of the binary use
// the raw doorbell, so that BenchmarkMessageRate can be compared both
// ways from one binary.
func init() {
	if os.Getenv("UVERBS_BENCH_RAW_DOORBELL") == "1" {
		doorbellSyscall = unix.RawSyscall
	}
}
