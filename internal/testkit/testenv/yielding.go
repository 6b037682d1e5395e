package testenv

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// StopBound is how long stopping the world for a collection may take
// while goroutines poll and yield (RequireYielding): one that yields is
// stopped at its next yield, one that spins without yielding only by the
// runtime's asynchronous preemption, after 10 ms of running.
const StopBound = 3 * time.Millisecond

// RequireYielding is RequireResponsive for goroutines that stay runnable,
// polling and yielding the P between polls, rather than parked: with
// GOMAXPROCS=1 a 1 ms sleep elsewhere must wake within SleepBound
// (median of SleepRounds), and every stop of the world for a collection
// must take at most StopBound (the runtime's
// /sched/pauses/stopping/gc:seconds). How long a whole collection takes
// is not bounded: its mark phase shares the P with the runnable
// goroutines (a quarter of it, with one P), as in any busy program. start
// is called once; a few measurements are allowed, as RequireResponsive
// allows.
func RequireYielding(t testing.TB, what string, start func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	start()
	time.Sleep(20 * time.Millisecond)
	sleepBound, stopBound := SleepBound, StopBound
	if Race {
		sleepBound, stopBound = raceSlowdown*SleepBound, 2*StopBound
	}
	var sleep, stop time.Duration
	for i := range attempts {
		sleep = sleepMedian()
		before := stopping()
		for range 3 {
			runtime.GC()
		}
		stop = leastOfWorstGrown(before, stopping())
		if sleep <= sleepBound && stop <= stopBound {
			t.Logf("%s with GOMAXPROCS=1: time.Sleep(1ms) %v (median), stopping the world for GC at least %v", what, sleep, stop)
			return
		}
		t.Logf("%s with GOMAXPROCS=1, measurement %d: time.Sleep(1ms) %v (median), stopping the world for GC at least %v", what, i+1, sleep, stop)
	}
	t.Fatalf("%s with GOMAXPROCS=1: in %d measurements time.Sleep(1ms) took %v (median, at most %v), stopping the world for GC at least %v (at most %v) at the last",
		what, attempts, sleep, sleepBound, stop, stopBound)
}

func stopping() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/pauses/stopping/gc:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// leastOfWorstGrown is the lower bound of the highest bucket whose count
// grew from before to after: the longest new pause was at least that
// long. 0 when none grew.
func leastOfWorstGrown(before, after *metrics.Float64Histogram) time.Duration {
	for i := len(after.Counts) - 1; i >= 0; i-- {
		if after.Counts[i] > before.Counts[i] {
			return time.Duration(after.Buckets[i] * float64(time.Second))
		}
	}
	return 0
}
