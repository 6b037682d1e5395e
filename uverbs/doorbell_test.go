package uverbs

import (
	"testing"
	"time"
)

// TestDoorbellGate: a kind of doorbell takes the raw call only after
// doorbellRun short calls in a row through the scheduler; a long raw
// call sends the next ones back and doubles the run needed (up to
// doorbellMaxRun); a long call through the scheduler restarts the run;
// the process-wide policies override the gate.
func TestDoorbellGate(t *testing.T) {
	short, long := doorbellShort/2, doorbellShort+time.Microsecond
	var g doorbellGate
	// through the scheduler until the run is long enough
	feed := func(n int, d time.Duration) {
		t.Helper()
		for range n {
			raw := g.useRaw()
			g.took(d, raw)
		}
	}
	feed(doorbellRun-1, short)
	if g.useRaw() {
		t.Fatalf("raw after %d short calls", doorbellRun-1)
	}
	feed(1, long) // a long one restarts the run
	feed(doorbellRun-1, short)
	if g.useRaw() {
		t.Fatal("raw although a long call broke the run")
	}
	feed(1, short)
	if !g.useRaw() {
		t.Fatalf("not raw after %d short calls in a row", doorbellRun)
	}
	feed(5, short)
	if !g.useRaw() || g.rawCalls.Load() != 5 {
		t.Fatalf("raw %v after short raw calls, %d counted", g.useRaw(), g.rawCalls.Load())
	}
	feed(1, long) // a long raw call: back through the scheduler
	if g.useRaw() || g.fallbacks.Load() != 1 {
		t.Fatalf("raw %v after a long raw call, %d fall-backs", g.useRaw(), g.fallbacks.Load())
	}
	feed(2*doorbellRun-1, short)
	if g.useRaw() {
		t.Fatalf("raw again after %d short calls; the run doubles after a fall-back", 2*doorbellRun-1)
	}
	feed(1, short)
	if !g.useRaw() {
		t.Fatalf("not raw after %d short calls", 2*doorbellRun)
	}
	for range 20 {
		feed(1, long)
		feed(int(g.need.Load()), short)
	}
	if g.need.Load() != doorbellMaxRun || !g.useRaw() {
		t.Fatalf("run needed %d (raw %v) after many fall-backs, want the cap %d", g.need.Load(), g.useRaw(), doorbellMaxRun)
	}

	for _, tc := range []struct {
		p    doorbellPolicy
		want bool
	}{{doorbellAlwaysSyscall, false}, {doorbellAlwaysRaw, true}} {
		old := doorbellMode.Swap(int32(tc.p))
		var fresh doorbellGate
		if got := fresh.useRaw(); got != tc.want {
			t.Errorf("policy %d: raw %v, want %v", tc.p, got, tc.want)
		}
		g.raw.Store(!tc.want)
		if got := g.useRaw(); got != tc.want {
			t.Errorf("policy %d over a gate of the other mind: raw %v, want %v", tc.p, got, tc.want)
		}
		doorbellMode.Store(old)
	}
}

// TestDoorbellGateNoAllocs: deciding and recording allocate nothing.
func TestDoorbellGateNoAllocs(t *testing.T) {
	var g doorbellGate
	if n := testing.AllocsPerRun(100, func() { g.took(time.Microsecond, g.useRaw()) }); n != 0 {
		t.Fatalf("%v allocations per doorbell decision", n)
	}
}
