package cmtime

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// noSample is show_perf's starting minimum, which stays when a step
// has no sample (it prints as 1000000000.00: the float nearest).
const noSample float32 = 999999999.

// us is a span in microseconds as cmtime.c's diff_us gives it: a C
// float; 0 for a span not taken.
func (s span) us() float32 {
	if !s.taken() {
		return 0
	}
	return float32(float64(s[1].Sub(s[0]).Nanoseconds()) / 1e3)
}

// stats are show_perf's numbers of one step: the whole step's time,
// and the longest and shortest of the nodes' (in µs, C floats).
type stats struct {
	total, max, min float32
}

// showPerf prints the table.
func (t *test) showPerf() {
	var st [nSteps]stats
	for s := range nSteps {
		st[s] = stats{total: t.times[s].us(), min: noSample}
		for _, n := range t.nodes {
			if !n.times[s].taken() {
				continue
			}
			us := n.times[s].us()
			st[s].max = max(st[s].max, us)
			st[s].min = min(st[s].min, us)
		}
	}
	t.outMu.Lock()
	defer t.outMu.Unlock()
	writeTable(t.stdout, st, int32(t.cfg.connections), t.cfg.src != "")
}

// writeTable prints show_perf's table: per step (bind addr only with
// -b) its total in ms, its slowest node in ms, its fastest in µs and
// the total per connection in µs, each as printf's "%11.2f" of the C
// expression (float / double, float / int).
func writeTable(w io.Writer, st [nSteps]stats, connections int32, bind bool) {
	var b strings.Builder
	b.WriteString("step              total ms     max ms     min us  us / conn\n")
	for s := range nSteps {
		if s == stepBind && !bind {
			continue
		}
		fmt.Fprintf(&b, "%-13s: %s%s%s%s\n", stepNames[s], cfloat(float64(st[s].total)/1000.), cfloat(float64(st[s].max)/1000.),
			cfloat(float64(st[s].min)), cfloat(float64(st[s].total/float32(connections))))
	}
	io.WriteString(w, b.String())
}

// cfloat is glibc's "%11.2f": Go's for finite numbers, "inf" and
// "nan" with their sign (the NaN of 0/0 on x86 is negative: "-nan").
func cfloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return fmt.Sprintf("%11s", "inf")
	case math.IsInf(v, -1):
		return fmt.Sprintf("%11s", "-inf")
	case math.IsNaN(v):
		if math.Signbit(v) {
			return fmt.Sprintf("%11s", "-nan")
		}
		return fmt.Sprintf("%11s", "nan")
	}
	return fmt.Sprintf("%11.2f", v)
}
