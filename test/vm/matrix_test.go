package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSelectSessionKernels(t *testing.T) {
	session := []kernel{{Release: "6.1.0-57-amd64"}, {Release: "6.12.117+deb12-amd64"}}
	names := func(ks []kernel) []string {
		var n []string
		for _, k := range ks {
			n = append(n, k.Release)
		}
		return n
	}
	for spec, want := range map[string][]string{
		"all":    {"6.1.0-57-amd64", "6.12.117+deb12-amd64"},
		"none":   nil,
		"6.12":   {"6.12.117+deb12-amd64"},
		"newest": {"6.12.117+deb12-amd64"},
		"oldest": {"6.1.0-57-amd64"},
	} {
		got, err := selectSessionKernels("race", spec, session)
		if err != nil {
			t.Errorf("selectSessionKernels(%q): %v", spec, err)
			continue
		}
		if diff := cmp.Diff(want, names(got)); diff != "" {
			t.Errorf("selectSessionKernels(%q) (-want +got):\n%s", spec, diff)
		}
	}
	// A kernel named must be one the session boots; the error names the flag.
	if _, err := selectSessionKernels("wire-self", "6.13", session); err == nil || !strings.Contains(err.Error(), "-wire-self") {
		t.Errorf("selectSessionKernels(6.13) = %v, want an error naming -wire-self", err)
	}
}

func TestJobIDs(t *testing.T) {
	s := &session{kernels: []kernel{{Release: "a"}, {Release: "b"}}}
	js := append(s.jobs([]int{2, 16}, "", nil), s.jobs([]int{2}, "race", nil)...)
	var ids []string
	for _, j := range js {
		ids = append(ids, j.id())
	}
	want := []string{"a-2", "a-16", "b-2", "b-16", "a-2-race", "b-2-race"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("job ids (-want +got):\n%s", diff)
	}
	r := &vmRun{Kernel: kernel{Release: "a"}, Devices: 2, Suffix: "race"}
	if got := r.name(); got != "kernel a, 2 devices, race" {
		t.Errorf("name = %q", got)
	}
}

func TestParseOptionsParallelAndRace(t *testing.T) {
	o, err := parseOptions([]string{"test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.race != "newest" || o.parallel != max(1, runtime.NumCPU()) {
		t.Errorf("defaults: race %q parallel %d, want newest and %d", o.race, o.parallel, runtime.NumCPU())
	}
	o, err = parseOptions([]string{"-smp", "2", "test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := max(1, runtime.NumCPU()/2); o.parallel != want {
		t.Errorf("-smp 2: parallel %d, want %d", o.parallel, want)
	}
	o, err = parseOptions([]string{"-smp", "2", "-parallel", "3", "-race", "none", "test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.parallel != 3 || o.race != "none" {
		t.Errorf("explicit: parallel %d race %q, want 3 and none", o.parallel, o.race)
	}
	for _, args := range [][]string{{"-parallel", "0", "test"}, {"-race", " ", "test"}} {
		if _, err := parseOptions(args, io.Discard); err == nil {
			t.Errorf("parseOptions(%q): no error", args)
		}
	}
}

func TestTallyRaces(t *testing.T) {
	out := `VM-TEST-START rdma
=== RUN   TestIntegrationX
==================
WARNING: DATA RACE
Write at 0x00c000012345 by goroutine 7:
  github.com/rdmastack/rdmastack/rdma.(*ID).close()
      /src/rdma/id.go:12 +0x44
        more of the stack
==================
    testing.go:1490: race detected during execution of test
--- FAIL: TestIntegrationX (0.10s)
VM-TEST-EXIT rdma 1
`
	tl := tallyOf(out)
	if tl.Races != 1 || tl.Failed != 1 || tl.bad() != 1 {
		t.Errorf("races %d failed %d bad %d, want 1, 1, 1", tl.Races, tl.Failed, tl.bad())
	}
	want := []string{"rdma: DATA RACE reported", "rdma: FAIL TestIntegrationX", "  testing.go:1490: race detected during execution of test"}
	if diff := cmp.Diff(want, tl.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestUsesTestenv(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a_test.go", "package a\n\nimport \"example.com/m/internal/testkit/testenvx\"\n")
	write("a.go", "package a\n\nimport \"example.com/m/internal/testkit/testenv\"\n")
	if ok, err := usesTestenv(dir, "example.com/m"); err != nil || ok {
		t.Errorf("no test file imports testenv: %v, %v; want false", ok, err)
	}
	write("b_test.go", "package a\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/internal/testkit/testenv\"\n)\n")
	if ok, err := usesTestenv(dir, "example.com/m"); err != nil || !ok {
		t.Errorf("a test file imports testenv: %v, %v; want true", ok, err)
	}
}

// TestBinsForCount: the drop-ins' interop suites and the stream package
// run with the first device count only; the rest with every count.
func TestBinsForCount(t *testing.T) {
	const mod = "github.com/rdmastack/rdmastack"
	bins := []testBinary{{ImportPath: mod + "/nldev"}, {ImportPath: mod + "/cmd/internal/rstream"},
		{ImportPath: mod + "/cmd/internal/ibsysfs"}, {ImportPath: mod + "/rdma/rsocket"}, {ImportPath: mod + "/cmd/internal/perftest"}}
	if got := binsForCount(bins, mod, true); len(got) != len(bins) {
		t.Fatalf("first count: %v", got)
	}
	var got []string
	for _, b := range binsForCount(bins, mod, false) {
		got = append(got, strings.TrimPrefix(b.ImportPath, mod+"/"))
	}
	if want := []string{"nldev", "cmd/internal/ibsysfs"}; !slices.Equal(got, want) {
		t.Fatalf("other counts: %v, want %v", got, want)
	}
}

// TestBounded: every index runs once, never more than parallel at a
// time, started in order; a cancelled context starts nothing more and
// says it was interrupted.
func TestBounded(t *testing.T) {
	var mu sync.Mutex
	var started []int
	running, most := 0, 0
	err := bounded(context.Background(), 7, 2, func(i int) {
		mu.Lock()
		started = append(started, i)
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
	})
	if err != nil || len(started) != 7 || most > 2 || most < 1 {
		t.Fatalf("bounded: %v, started %v, at most %d at once", err, started, most)
	}
	for i := 1; i < len(started); i++ {
		if started[i] < started[i-1]-1 { // two may swap as their goroutines start
			t.Errorf("started out of order: %v", started)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	if err := bounded(ctx, 3, 1, func(int) { n++ }); err == nil || !strings.Contains(err.Error(), "interrupted") || n != 0 {
		t.Errorf("bounded with a cancelled context: %v after %d runs, want interrupted after none", err, n)
	}
}
