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
	sleep = sleepMedian()
	for range 3 {
		t0 := time.Now()
		runtime.GC()
		gc = max(gc, time.Since(t0))
	}
	return sleep, gc
}

// sleepMedian is the median time a time.Sleep(1ms) takes, of SleepRounds.
func sleepMedian() time.Duration {
	d := make([]time.Duration, SleepRounds)
	for i := range d {
		t0 := time.Now()
		time.Sleep(time.Millisecond)
		d[i] = time.Since(t0)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// raceSlowdown is how much the race detector may stretch the bounds: a
// collection instruments every pointer it scans and a sleep's wakeup runs
// instrumented scheduler code. A waiter that held up the collector cost
// it 110 ms and the sleep 22 ms (uverbs/doorbell.go's history), far past
// even the stretched bounds.
const raceSlowdown = 4

// Bounds are SleepBound and GCBound, stretched by the race detector's
// slowdown when the binary has it.
func Bounds() (sleep, gc time.Duration) {
	if Race {
		return raceSlowdown * SleepBound, raceSlowdown * GCBound
	}
	return SleepBound, GCBound
}

// attempts is how many measurements RequireResponsive may take, pause
// apart: a guest whose host is busy elsewhere can miss its vCPU for a
// stretch of them (three were not enough in a CI run of four guests on two
// host cores), but a waiter that holds up the runtime does so every time.
const (
	attempts = 8
	pause    = 100 * time.Millisecond
)

// RequireResponsive fails the test unless Responsiveness stays within
// Bounds in one of a few measurements; start is called once.
func RequireResponsive(t testing.TB, what string, start func()) {
	t.Helper()
	sleepBound, gcBound := Bounds()
	var sleep, gc time.Duration
	for i := range attempts {
		if i == 0 {
			sleep, gc = Responsiveness(t, start)
		} else {
			time.Sleep(pause)
			sleep, gc = Responsiveness(t, func() {})
		}
		if sleep <= sleepBound && gc <= gcBound {
			t.Logf("%s with GOMAXPROCS=1: time.Sleep(1ms) %v (median), runtime.GC() %v", what, sleep, gc)
			return
		}
		t.Logf("%s with GOMAXPROCS=1, measurement %d: time.Sleep(1ms) %v (median), runtime.GC() %v", what, i+1, sleep, gc)
	}
	t.Fatalf("%s with GOMAXPROCS=1: in %d measurements time.Sleep(1ms) took %v (median, at most %v), runtime.GC() %v (at most %v) at the last",
		what, attempts, sleep, sleepBound, gc, gcBound)
}
