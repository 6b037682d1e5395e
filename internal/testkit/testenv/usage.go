package testenv

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// SelfUsage is what the process has used so far (getrusage RUSAGE_SELF,
// every thread): its context switches, voluntary and not, and its user
// and system time.
func SelfUsage() (switches int64, cpu time.Duration, err error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, fmt.Errorf("getrusage: %w", err)
	}
	return ru.Nvcsw + ru.Nivcsw, time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// SelfCPU is SelfUsage's user and system time; an error fails tb.
func SelfCPU(tb testing.TB) time.Duration {
	tb.Helper()
	_, cpu, err := SelfUsage()
	if err != nil {
		tb.Fatal(err)
	}
	return cpu
}
