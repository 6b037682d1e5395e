package testenv

import (
	"runtime"
	"testing"
	"time"
)

// TimeCollections is the timed part of a benchmark of the garbage
// collector under a load the caller runs: b.N forced collections
// (runtime.GC), reported as their mean and worst duration, gc-ms and
// gc-max-ms. The timer runs only around them.
func TimeCollections(b *testing.B) {
	var total, worst time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		runtime.GC()
		d := time.Since(t0)
		total += d
		worst = max(worst, d)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "gc-ms")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "gc-max-ms")
}
