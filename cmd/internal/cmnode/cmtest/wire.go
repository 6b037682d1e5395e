package cmtest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// WireRun runs one server and client pair of s across the wire of a
// test/vm pair, the two halves of a wire test or benchmark calling it
// alike (name tells their runs apart and must be the same on both): side
// 0's guest runs s as the server with args(port, false) and, once wait
// says it listens, hands the port to side 1's, which runs s as the
// client with args(port, true) and measures its result. Both halves
// return what measure returned; a side that fails fails tb, and its peer
// too, without waiting for it.
func WireRun(tb testing.TB, w *testenv.WireEnv, name string, s Side, wait func(port uint16) error,
	args func(port uint16, client bool) []string, measure func(client Result) (string, error)) string {
	tb.Helper()
	const limit = 5 * time.Minute
	const failed = "failed: "
	if w.Side == 0 {
		port := Port()
		waitS := s.Start(args(port, false), limit)
		if err := wait(port); err != nil {
			w.Exchange(tb, name+"/port", failed+"the server")
			tb.Fatalf("%v server: %v\n%v", s, err, waitS())
		}
		w.Exchange(tb, name+"/port", strconv.Itoa(int(port)))
		rs := waitS()
		status := "ok"
		if rs.Code != 0 {
			status = failed + "the server"
		}
		v := w.Exchange(tb, name+"/result", status)
		if status != "ok" {
			tb.Fatalf("%v server: %v", s, rs)
		}
		if strings.HasPrefix(v, failed) {
			tb.Fatalf("%v server ended well, but the peer's client %s", s, v)
		}
		return v
	}
	p := w.Exchange(tb, name+"/port", "")
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		tb.Fatalf("the peer's server port %q: %v", p, err)
	}
	rc := s.Start(args(uint16(port), true), limit)()
	var v string
	if rc.Code != 0 {
		err = errors.New("it failed")
	} else {
		v, err = measure(rc)
	}
	if err != nil {
		w.Exchange(tb, name+"/result", failed+"the client")
		tb.Fatalf("%v client: %v\n%v", s, err, rc)
	}
	if st := w.Exchange(tb, name+"/result", v); st != "ok" {
		tb.Fatalf("%v client ended well, but the peer's server %s", s, st)
	}
	return v
}

// WireABBA runs rounds runs of ours and of theirs across the wire,
// alternating in ABBA order (after one warm-up run of theirs), where run
// makes one and returns its figure (MB/s, Mpps: more is better, or µs:
// less is), and returns the medians.
func WireABBA(rounds int, ours, theirs Side, run func(s Side) float64) (o, t float64) {
	run(theirs)
	var os, ts []float64
	for r := range rounds {
		order := []Side{ours, theirs}
		if r%4 == 1 || r%4 == 2 {
			order = []Side{theirs, ours}
		}
		for _, s := range order {
			if s.Name == ours.Name {
				os = append(os, run(s))
			} else {
				ts = append(ts, run(s))
			}
		}
	}
	return Median(os), Median(ts)
}
