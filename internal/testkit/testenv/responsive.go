package testenv

import (
	"bytes"
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
// stretch of them, but a waiter that holds up the runtime does so every
// time.
const (
	attempts = 8
	pause    = 100 * time.Millisecond
)

// Contention: a measurement passes when it is within Bounds, or within
// these multiples of the same process's measurement before start, with
// no waiters. On a host whose cores four guests share, the median 1 ms
// sleep of a guest with no waiters at all has been 1.5-2.7 ms, past
// SleepBound; a waiter that held the P made it 22 ms (and a collection
// 110 ms), and one that spun would make it the runtime's 10 ms
// preemption slice, past these multiples of any baseline within the
// hard ceilings below.
const (
	sleepVsBaseline = 1.5
	gcVsBaseline    = 2
	sleepCeiling    = 5 * time.Millisecond
	gcCeiling       = 50 * time.Millisecond
)

// RequireResponsive fails the test unless the parked goroutines start
// starts are parked in the netpoller (their number in a goroutine dump
// in state "IO wait" grows by at least parked) and Responsiveness stays
// within Bounds, or within the contention allowance of a baseline taken
// just before, in one of a few measurements; start is called once.
func RequireResponsive(t testing.TB, what string, parked int, start func()) {
	t.Helper()
	sleepBound, gcBound := Bounds()
	baseSleep, baseGC := Responsiveness(t, func() {})
	allowSleep := allowance(sleepBound, baseSleep, sleepVsBaseline, sleepCeiling)
	allowGC := allowance(gcBound, baseGC, gcVsBaseline, gcCeiling)
	before := ioWaiting()
	var sleep, gc time.Duration
	for i := range attempts {
		if i == 0 {
			sleep, gc = Responsiveness(t, start)
			requireParked(t, what, before, parked)
		} else {
			time.Sleep(pause)
			sleep, gc = Responsiveness(t, func() {})
		}
		if sleep <= allowSleep && gc <= allowGC {
			t.Logf("%s with GOMAXPROCS=1: time.Sleep(1ms) %v (median), runtime.GC() %v; with none waiting %v and %v",
				what, sleep, gc, baseSleep, baseGC)
			return
		}
		t.Logf("%s with GOMAXPROCS=1, measurement %d: time.Sleep(1ms) %v (median), runtime.GC() %v", what, i+1, sleep, gc)
	}
	t.Fatalf("%s with GOMAXPROCS=1: in %d measurements time.Sleep(1ms) took %v (median, at most %v), runtime.GC() %v (at most %v) at the last; with none waiting %v and %v",
		what, attempts, sleep, allowSleep, gc, allowGC, baseSleep, baseGC)
}

// allowance is what a measurement may take: bound, or factor times the
// baseline where that is more, up to ceiling (which never lowers bound,
// stretched as it is under the race detector).
func allowance(bound, base time.Duration, factor float64, ceiling time.Duration) time.Duration {
	return max(bound, min(time.Duration(factor*float64(base)), ceiling))
}

// requireParked waits up to a second for at least parked more goroutines
// than before to be in the netpoller, and fails the test if they are
// not: a waiter in a blocking system call holds a thread, one that polls
// stays runnable, and neither shows as "IO wait".
func requireParked(t testing.TB, what string, before, parked int) {
	t.Helper()
	var n int
	for range 100 {
		if n = ioWaiting() - before; n >= parked {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: %d goroutines more than before are parked in the netpoller, want %d", what, n, parked)
}

// ioWaiting is the number of goroutines in state "IO wait" (parked in the
// netpoller) in a dump of them all.
func ioWaiting() int {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte(" [IO wait"))
		}
		buf = make([]byte, 2*len(buf))
	}
}
