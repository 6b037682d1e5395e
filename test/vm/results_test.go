package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTally(t *testing.T) {
	out := `VM-TEST-START nldev
=== RUN   TestDial
--- PASS: TestDial (0.01s)
=== RUN   TestLinks
=== RUN   TestLinks/rxe0
    --- PASS: TestLinks/rxe0 (0.00s)
=== RUN   TestLinks/rxe1
    links_test.go:12: no port
    --- FAIL: TestLinks/rxe1 (0.00s)
--- FAIL: TestLinks (0.00s)
=== RUN   TestNoDevice
    x_test.go:3: skipping: no device
--- SKIP: TestNoDevice (0.00s)
FAIL
VM-TEST-EXIT nldev 1
VM-TEST-START uverbs
panic: test timed out after 10m0s
VM-TEST-EXIT uverbs 2
VM-TEST-START ok
--- PASS: TestOK (0.00s)
PASS
VM-TEST-EXIT ok 0
this line says --- PASS: in the middle
--- PASSED: not a result
`
	tl := tallyOf(out)
	if tl.Passed != 3 || tl.Failed != 3 || tl.Skipped != 1 {
		t.Errorf("got %d passed, %d failed, %d skipped; want 3, 3, 1", tl.Passed, tl.Failed, tl.Skipped)
	}
	if got := tl.bad(); got != 4 {
		t.Errorf("bad() = %d, want 4", got)
	}
	want := []string{
		"nldev: FAIL TestLinks/rxe1",
		"  links_test.go:12: no port",
		"nldev: FAIL TestLinks",
		"nldev: SKIP TestNoDevice (a skip inside the VM counts as a failure)",
		"  x_test.go:3: skipping: no device",
		"uverbs: test binary exited with status 2",
		"  panic: test timed out after 10m0s",
	}
	if diff := cmp.Diff(want, tl.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestTallyBenchmarks: a benchmark's result line is a pass of its
// top-level name; its FAIL line replaces that.
func TestTallyBenchmarks(t *testing.T) {
	out := `VM-TEST-START rsock
BenchmarkWireA/size=64          	       1	 123456789 ns/op	        1.10 ratio-ours/rdmacore
BenchmarkWireA/size=4096-4      	       1	 123456789 ns/op
BenchmarkWireB-4                	       2	      1000 ns/op
BenchmarkWireC
    bench_test.go:9: no peer
--- FAIL: BenchmarkWireC
BenchmarkWireD/x   	       1	 5 ns/op
--- FAIL: BenchmarkWireD/y
--- FAIL: BenchmarkWireD
--- BENCH: BenchmarkWireE
BenchmarkWireE 1 not-a-number ns/op
VM-TEST-EXIT rsock 1
`
	tl := tallyOf(out)
	want := map[string]string{
		"rsock: BenchmarkWireA": "PASS", "rsock: BenchmarkWireB": "PASS",
		"rsock: BenchmarkWireC": "FAIL", "rsock: BenchmarkWireD": "FAIL",
	}
	if diff := cmp.Diff(want, tl.Results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if tl.Passed != 4 || tl.Failed != 3 {
		t.Errorf("got %d passed, %d failed; want 4, 3", tl.Passed, tl.Failed)
	}
	if !slices.Contains(tl.Problems, "  bench_test.go:9: no peer") {
		t.Errorf("problems lack BenchmarkWireC's reason: %q", tl.Problems)
	}
}

// TestTallyQuotes: a failed test's own lines follow its FAIL line in the
// problems, found under the header that says whose output follows when
// parallel tests interleave, at most quoteLines of them, each cut to
// quoteWidth; a passed test's lines are not kept.
func TestTallyQuotes(t *testing.T) {
	long := strings.Repeat("x", quoteWidth+50)
	out := `VM-TEST-START cmtime
=== RUN   TestA
=== PAUSE TestA
=== RUN   TestB
=== PAUSE TestB
=== CONT  TestA
    a_test.go:1: a says
=== CONT  TestB
    b_test.go:2: first
        stdout: ` + long + `
        stderr: two
        three
        four
=== NAME  TestA
    a_test.go:3: a again
--- PASS: TestA (0.01s)
--- FAIL: TestB (0.02s)
=== RUN   TestC
=== RUN   TestC/sub
    c_test.go:9: sub failed
    --- FAIL: TestC/sub (0.00s)
--- FAIL: TestC (0.00s)
VM-TEST-EXIT cmtime 1
`
	tl := tallyOf(out)
	want := []string{
		"cmtime: FAIL TestB",
		"  b_test.go:2: first",
		"  stdout: " + long[:quoteWidth-len("stdout: ")] + "...",
		"  stderr: two",
		"  three",
		"cmtime: FAIL TestC/sub",
		"  c_test.go:9: sub failed",
		"cmtime: FAIL TestC",
	}
	if diff := cmp.Diff(want, tl.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(tl.logs) != 0 {
		t.Errorf("lines kept after every test ended: %q", tl.logs)
	}
}

func TestPrintRunSummary(t *testing.T) {
	reports := []runReport{
		{Name: "kernel a, 2 devices", Tally: tally{Passed: 3}, Note: "booted twice: the kernel of x panicked the first time"},
		{Name: "kernel b, 2 devices", Err: errString("timed out after 20s"), Tally: tally{Passed: 1, Problems: []string{"x: FAIL TestY"}}},
	}
	var b strings.Builder
	printRunSummary(&b, reports, true)
	for _, want := range []string{
		"kernel a, 2 devices: 3 passed, 0 failed, 0 skipped",
		"kernel b, 2 devices: FAILED: timed out after 20s",
		"x: FAIL TestY",
		"(booted twice: the kernel of x panicked the first time)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// tallyOf is the tally of out's lines.
func tallyOf(out string) tally {
	var tl tally
	for _, l := range strings.Split(out, "\n") {
		tl.line(l)
	}
	return tl
}

type errString string

func (e errString) Error() string { return string(e) }
