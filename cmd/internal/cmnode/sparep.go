package cmnode

import (
	"os"
	"runtime"
)

// KeepSpareP gives the Go scheduler a second P when it has one (one
// CPU) and GOMAXPROCS is not set in the environment. The rdma_cm and
// uverbs commands a connection needs can each sleep in the kernel for
// longer than sysmon's 20 µs tick; with a single P, sysmon takes it
// from the thread in the system call and hands it to another (started
// or woken for the purpose), and the thread has to take it back when
// the call returns: several context switches a command, where the C
// programs' thread just sleeps. With an idle P, sysmon leaves a
// thread in a system call alone (for up to 10 ms). The same holds for
// the send doorbell of Linux 6.1's rxe, which runs the peer's work
// before it returns: rstream on 6.1 moves 4.3 times the 64-byte
// transfers with the spare P, riostream 2.4 times (docs/benchmarks.md). The commands call it
// first; the library leaves GOMAXPROCS to its users.
func KeepSpareP() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
}
