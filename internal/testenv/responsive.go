package testenv

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// The bounds a program must keep while goroutines wait for events that
// never come: a 1 ms sleep elsewhere wakes within SleepBound (median of
// SleepRounds), and a garbage collection takes at most GCBound.
const (
	SleepBound  = 1500 * time.Microsecond
	GCBound     = 10 * time.Millisecond
	SleepRounds = 50
)

// Responsiveness measures, with GOMAXPROCS=1 for its duration, the median
// of SleepRounds time.Sleep(1ms) calls and the longest of three
// runtime.GC() calls, after start has started the waiters (it must return
// once they wait). It restores GOMAXPROCS.
func Responsiveness(t testing.TB, start func()) (sleep, gc time.Duration) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	start()
	// Let the waiters reach their wait, and warm up: under TCG the first
	// collections of a young process pay for faulting in the memory and
	// code they touch (45-120 ms for the first, less for each after),
	// which says nothing about whether the waiters hold up the collector.
	time.Sleep(20 * time.Millisecond)
	for range 3 {
		runtime.GC()
	}
	d := make([]time.Duration, SleepRounds)
	for i := range d {
		t0 := time.Now()
		time.Sleep(time.Millisecond)
		d[i] = time.Since(t0)
	}
	slices.Sort(d)
	sleep = d[len(d)/2]
	for range 3 {
		t0 := time.Now()
		runtime.GC()
		gc = max(gc, time.Since(t0))
	}
	return sleep, gc
}

// RequireResponsive fails the test unless Responsiveness stays within
// SleepBound and GCBound.
func RequireResponsive(t testing.TB, what string, start func()) {
	t.Helper()
	sleep, gc := Responsiveness(t, start)
	if sleep > SleepBound || gc > GCBound {
		t.Fatalf("%s with GOMAXPROCS=1: time.Sleep(1ms) took %v (median, at most %v), runtime.GC() %v (at most %v)",
			what, sleep, SleepBound, gc, GCBound)
	}
	t.Logf("%s with GOMAXPROCS=1: time.Sleep(1ms) %v (median), runtime.GC() %v", what, sleep, gc)
}
