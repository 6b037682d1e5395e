package perftest

import "testing"

func TestDurationPhases(t *testing.T) {
	c := parsed(t, "ib_write_bw", "-D", "4", "-f", "1", "h")
	if !c.DurMode || c.Iters != 0 || !c.NoPeak {
		t.Fatalf("-D 4: %+v", c)
	}
	var now int64
	d := &durClock{c: c, now: func() int64 { return now }}
	if d.ended() || d.sampling() {
		t.Fatal("ended or sampling before begin")
	}
	now = 5e8
	d.begin()
	for _, step := range []struct {
		at   int64
		want phase
	}{{9e8, phaseStart}, {15e8, phaseSample}, {34e8, phaseSample}, {35e8, phaseStop}, {44e8, phaseStop}, {45e8, phaseEnd}} {
		now = step.at
		if got := d.tick(); got != step.want {
			t.Errorf("at %d ns: phase %d, want %d", step.at, got, step.want)
		}
	}
	if d.from != 15e8 || d.to != 35e8 {
		t.Errorf("sample from %d to %d", d.from, d.to)
	}
	// Without a margin the sample starts at once; perftest's default
	// margin is a quarter of the duration.
	z := parsed(t, "ib_send_lat", "-D", "8")
	if z.Margin != 2 {
		t.Errorf("default margin %d", z.Margin)
	}
	z.Margin = 0
	now = 0
	d = &durClock{c: z, now: func() int64 { return now }}
	d.begin()
	if !d.sampling() {
		t.Error("no margin: not sampling at once")
	}
}
