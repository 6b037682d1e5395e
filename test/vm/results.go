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

// runHeader matches go test -v's line that says whose output follows:
// "=== RUN   TestX/sub" (also NAME and CONT, when tests interleave).
// A benchmark without a header says its name on a line of its own.
var runHeader = regexp.MustCompile(`^(?:=== (?:RUN|NAME|CONT)\s+(\S+)|(Benchmark\S*)\s*)$`)

// What the summary quotes of a failed or skipped test's own output (its
// t.Error, t.Fatal and t.Skip lines, indented by go test): at most
// quoteLines lines of at most quoteWidth bytes each, so that a summary
// read from the end of a long log says why, not only what.
const (
	quoteLines = 4
	quoteWidth = 240
)

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

	binary      string              // the test binary running now
	binaryFails int                 // FAIL lines of that binary
	running     string              // the test whose output follows (runHeader)
	logs        map[string][]string // the first quoteLines output lines of each unfinished test
	panicLine   string              // the binary's first "panic: " line
	inMessage   bool                // the last line was a test's message (logLine)
}

// line takes one line of the payload's output.
func (t *tally) line(s string) {
	if name, ok := strings.CutPrefix(s, markerTestStart); ok {
		t.binary = strings.TrimSpace(name)
		t.binaryFails, t.running, t.logs, t.panicLine, t.inMessage = 0, "", nil, "", false
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
			if t.panicLine != "" {
				t.Problems = append(t.Problems, "  "+t.panicLine)
			}
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
	if h := runHeader.FindStringSubmatch(s); h != nil {
		t.running = h[1] + h[2]
		return
	}
	if strings.HasPrefix(s, "panic: ") && t.panicLine == "" {
		t.panicLine = quote(s)
	}
	m := testLine.FindStringSubmatch(s)
	if m == nil {
		t.keep(s)
		return
	}
	if !strings.Contains(m[2], "/") {
		if t.Results == nil {
			t.Results = map[string]string{}
		}
		t.Results[t.where()+m[2]] = m[1]
	}
	quoted := t.logs[m[2]]
	delete(t.logs, m[2])
	if t.running == m[2] {
		t.running = ""
	}
	switch m[1] {
	case "PASS":
		t.Passed++
		return
	case "FAIL":
		t.Failed++
		t.binaryFails++
		t.Problems = append(t.Problems, t.where()+"FAIL "+m[2])
	case "SKIP":
		t.Skipped++
		t.Problems = append(t.Problems, t.where()+"SKIP "+m[2]+" (a skip inside the VM counts as a failure)")
	}
	for _, l := range quoted {
		t.Problems = append(t.Problems, "  "+l)
	}
}

// logLine matches a line of a test's own output as go test indents it:
// t.Log and its kin ("    file_test.go:12: text"), or the further
// lines of a message, indented deeper.
var logLine = regexp.MustCompile(`^(?:    )+(?:(\S+\.go:\d+: )|    )`)

// keep records s as output of the running test if it is one (logLine),
// up to quoteLines lines a test; a message's further lines only right
// after its first.
func (t *tally) keep(s string) {
	m := logLine.FindStringSubmatch(s)
	if m == nil || t.running == "" {
		t.inMessage = false
		return
	}
	if m[1] == "" && !t.inMessage || len(t.logs[t.running]) >= quoteLines {
		return
	}
	t.inMessage = true
	if t.logs == nil {
		t.logs = map[string][]string{}
	}
	t.logs[t.running] = append(t.logs[t.running], quote(s))
}

// quote is s without its indentation, cut to quoteWidth bytes (truncate).
func quote(s string) string { return truncate(strings.TrimSpace(s), quoteWidth) }

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
