package uverbs

import (
	"os"
)

// DoorbellMode names a doorbell policy for the benchmarks' comparison:
// "gated" (what the package does), "syscall" or "raw" (always that call).
type DoorbellMode string

// SetDoorbellMode sets the process's doorbell policy; it returns a
// function that restores the one before.
func SetDoorbellMode(m DoorbellMode) (restore func()) {
	old := doorbellMode.Load()
	p := doorbellGated
	switch m {
	case "syscall":
		p = doorbellAlwaysSyscall
	case "raw":
		p = doorbellAlwaysRaw
	}
	doorbellMode.Store(int32(p))
	return func() { doorbellMode.Store(old) }
}

// DoorbellCounts is how many doorbells of ctx took the raw call and how
// many of those fell back for being long, all kinds together.
func DoorbellCounts(ctx *Context) (raw, fallbacks uint64) {
	for i := range ctx.gates {
		raw += ctx.gates[i].rawCalls.Load()
		fallbacks += ctx.gates[i].fallbacks.Load()
	}
	return raw, fallbacks
}

// UVERBS_BENCH_DOORBELL=syscall|raw|gated sets every benchmark's
// doorbell policy, so that BenchmarkMessageRate can be compared between
// binaries' runs from one binary.
func init() {
	if m := os.Getenv("UVERBS_BENCH_DOORBELL"); m != "" {
		SetDoorbellMode(DoorbellMode(m))
	}
}
