package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// testLine matches the result lines of go test -v, subtests included.
var testLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)

// benchLine matches a benchmark's result line ("BenchmarkX/sub-4 \t 10\t
// 123 ns/op..."): the top-level name, and the GOMAXPROCS suffix of a
// benchmark without subbenchmarks (none when it is 1).
var benchLine = regexp.MustCompile(`^(Benchmark[^\s/]*?)(?:-\d+)?(?:/\S*)?\s+\d+\s+\d[\d.]* ns/op`)

// raceReport starts each report of the race detector.
const raceReport = "WARNING: DATA RACE"

// tally counts the test results of one VM run from the payload's output.
// Inside the VM a skip is a failure: there every test has what it needs.
type tally struct {
	Passed   int
	Failed   int      // FAIL lines, binaries that failed without one, boot failures
	Skipped  int      // SKIP lines
	Races    int      // race detector reports (the test or binary they are in fails too)
	Problems []string // one line per failure or skip
	// Results are the top-level tests' results ("PASS", "FAIL", "SKIP"),
	// by "binary: TestName".
	Results map[string]string

	binary      string // the test binary running now
	binaryFails int    // FAIL lines of that binary
}

// line takes one line of the payload's output.
func (t *tally) line(s string) {
	if name, ok := strings.CutPrefix(s, markerTestStart); ok {
		t.binary = strings.TrimSpace(name)
		t.binaryFails = 0
		return
	}
	if rest, ok := strings.CutPrefix(s, markerTestStatus); ok {
		name, code, _ := strings.Cut(strings.TrimSpace(rest), " ")
		n, err := strconv.Atoi(code)
		if err != nil {
			return
		}
		if n != 0 && t.binaryFails == 0 {
			t.Failed++
			t.Problems = append(t.Problems, fmt.Sprintf("%s: test binary exited with status %d", name, n))
		}
		t.binary = ""
		return
	}
	if strings.Contains(s, raceReport) {
		t.Races++
		t.Problems = append(t.Problems, t.where()+"DATA RACE reported")
		return
	}
	if m := benchLine.FindStringSubmatch(s); m != nil {
		// A benchmark that ran: it fails with a FAIL line (which then
		// replaces this result), not with this one.
		t.Passed++
		if _, ok := t.Results[t.where()+m[1]]; !ok {
			if t.Results == nil {
				t.Results = map[string]string{}
			}
			t.Results[t.where()+m[1]] = "PASS"
		}
		return
	}
	m := testLine.FindStringSubmatch(s)
	if m == nil {
		return
	}
	if !strings.Contains(m[2], "/") {
		if t.Results == nil {
			t.Results = map[string]string{}
		}
		t.Results[t.where()+m[2]] = m[1]
	}
	switch m[1] {
	case "PASS":
		t.Passed++
	case "FAIL":
		t.Failed++
		t.binaryFails++
		t.Problems = append(t.Problems, t.where()+"FAIL "+m[2])
	case "SKIP":
		t.Skipped++
		t.Problems = append(t.Problems, t.where()+"SKIP "+m[2]+" (a skip inside the VM counts as a failure)")
	}
}

func (t *tally) where() string {
	if t.binary == "" {
		return ""
	}
	return t.binary + ": "
}

// bad is the number of failures, skips included.
func (t *tally) bad() int { return t.Failed + t.Skipped }

// runReport is the outcome of one VM run.
type runReport struct {
	Name   string // "kernel K, N devices"
	Result vmResult
	Err    error  // the guest did not finish: boot failure, timeout
	Tally  tally  // test mode only
	Note   string // what the summary says besides, e.g. a second boot
}

// printRunSummary prints one line per run and its problems; test reports
// whether the runs were test mode runs.
func printRunSummary(w io.Writer, reports []runReport, test bool) {
	fmt.Fprintln(w, "vm: summary:")
	for _, r := range reports {
		timing := fmt.Sprintf("boot %s, total %s", seconds(r.Result.Boot), seconds(r.Result.Total))
		switch {
		case r.Err != nil:
			fmt.Fprintf(w, "vm:   %s: FAILED: %v (%s)\n", r.Name, r.Err, timing)
		case test:
			fmt.Fprintf(w, "vm:   %s: %d passed, %d failed, %d skipped, %d races (%s)\n",
				r.Name, r.Tally.Passed, r.Tally.Failed, r.Tally.Skipped, r.Tally.Races, timing)
		default:
			fmt.Fprintf(w, "vm:   %s: exit status %d (%s)\n", r.Name, r.Result.Status, timing)
		}
		if r.Note != "" {
			fmt.Fprintf(w, "vm:     (%s)\n", r.Note)
		}
		if test {
			for _, p := range r.Tally.Problems {
				fmt.Fprintf(w, "vm:     %s\n", p)
			}
		}
	}
}

// seconds formats d as "12.3s"; zero (never reached) is "-".
func seconds(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
