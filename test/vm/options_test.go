package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		mode    string
		devices []int
		kernels string
		timeout time.Duration
		verbose bool
		rest    []string
	}{
		{
			name: "run defaults", args: []string{"run", "--", "rdma", "-j", "dev", "show"},
			mode: "run", devices: []int{2}, kernels: "all", timeout: 15 * time.Minute,
			rest: []string{"rdma", "-j", "dev", "show"},
		},
		{
			name: "flags before and after the mode",
			args: []string{"-v", "-kernels", "6.12", "run", "-devices", "2,16", "-timeout", "20s", "--", "sleep", "100"},
			mode: "run", devices: []int{2, 16}, kernels: "6.12", timeout: 20 * time.Second, verbose: true,
			rest: []string{"sleep", "100"},
		},
		{
			name: "command without --", args: []string{"run", "rdma", "-j", "dev"},
			mode: "run", devices: []int{2}, kernels: "all", timeout: 15 * time.Minute,
			rest: []string{"rdma", "-j", "dev"},
		},
		{
			name: "command flags look like ours", args: []string{"run", "--", "ls", "-v"},
			mode: "run", devices: []int{2}, kernels: "all", timeout: 15 * time.Minute,
			rest: []string{"ls", "-v"},
		},
		{
			name: "test with binary flags", args: []string{"test", "-unit=false", "--", "-test.run", "TestX"},
			mode: "test", devices: []int{2, 16}, kernels: "all", timeout: 15 * time.Minute,
			rest: []string{"-test.run", "TestX"},
		},
		{
			name: "setup", args: []string{"-install=false", "setup"},
			mode: "setup", devices: []int{2}, kernels: "all", timeout: 15 * time.Minute,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseOptions(tt.args, io.Discard)
			if err != nil {
				t.Fatalf("parseOptions(%q): %v", tt.args, err)
			}
			if o.mode != tt.mode || o.kernels != tt.kernels || o.timeout != tt.timeout || o.verbose != tt.verbose {
				t.Errorf("got mode %q kernels %q timeout %v verbose %v, want %q %q %v %v",
					o.mode, o.kernels, o.timeout, o.verbose, tt.mode, tt.kernels, tt.timeout, tt.verbose)
			}
			if diff := cmp.Diff(tt.devices, o.devices); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.rest, o.args, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseOptionsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "missing mode"},
		{[]string{"frobnicate"}, "unknown mode"},
		{[]string{"run"}, "run needs a command"},
		{[]string{"setup", "extra"}, "setup takes no arguments"},
		{[]string{"-devices", "0", "run", "--", "true"}, "out of range"},
		{[]string{"-devices", "2,x", "run", "--", "true"}, "not a number"},
		{[]string{"-timeout", "0s", "run", "--", "true"}, "-timeout must be positive"},
		{[]string{"-mem", "64", "run", "--", "true"}, "-mem must be at least"},
		{[]string{"-kernels", " ", "run", "--", "true"}, "-kernels is empty"},
		{[]string{"-wire-self", "", "test"}, "-wire-self is empty"},
		{[]string{"-wire-nic", "rtl8139", "test"}, "want e1000 or virtio-net-pci"},
		{[]string{"-wire-parallel", "-1", "test"}, "-wire-parallel must be between"},
		{[]string{"-wire-parallel", "9", "test"}, "-wire-parallel must be between"},
		{[]string{"-nosuchflag", "run"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		_, err := parseOptions(tt.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseOptions(%q) = %v, want an error containing %q", tt.args, err, tt.want)
		}
	}
}

func TestParseOptionsHelp(t *testing.T) {
	var usage strings.Builder
	_, err := parseOptions([]string{"-h"}, &usage)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseOptions(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"go run ./test/vm", "-devices", "-kernels", "-timeout", "-wire-self", "-wire-nic", "-wire-parallel", "-append"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("usage does not mention %q:\n%s", want, usage.String())
		}
	}
}

func TestParseDeviceCounts(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{in: "2", want: []int{2}},
		{in: "2,16", want: []int{2, 16}},
		{in: " 16 , 2 ", want: []int{16, 2}},
		{in: "2,2,1", want: []int{2, 1}},
		{in: "1", want: []int{1}},
		{in: "256", want: []int{256}},
		{in: "", err: true},
		{in: "0", err: true},
		{in: "-1", err: true},
		{in: "257", err: true},
		{in: "2,", err: true},
		{in: "two", err: true},
	}
	for _, tt := range tests {
		got, err := parseDeviceCounts(tt.in)
		if tt.err {
			if err == nil {
				t.Errorf("parseDeviceCounts(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseDeviceCounts(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseDeviceCounts(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestParseOptionsWireSelf: by default only the oldest kernel meets itself
// on the wire (docs/testing.md says why); -wire-self and -append are kept.
func TestParseOptionsWireSelf(t *testing.T) {
	o, err := parseOptions([]string{"test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.wireSelf != "oldest" || o.append != "" || o.wireNIC != "e1000" || o.cpu != "max" {
		t.Errorf("defaults: -wire-self %q -append %q -wire-nic %q -cpu %q, want oldest, none, e1000 and max", o.wireSelf, o.append, o.wireNIC, o.cpu)
	}
	o, err = parseOptions([]string{"-wire-self", "all", "-append", "slub_debug=FZPU", "test"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.wireSelf != "all" || o.append != "slub_debug=FZPU" {
		t.Errorf("-wire-self %q -append %q, want all and slub_debug=FZPU", o.wireSelf, o.append)
	}
}

// TestWireParallel: two pairs at once for tests, one when a wire
// benchmark runs, and -wire-parallel whatever runs.
func TestWireParallel(t *testing.T) {
	tests := []testList{{wire: map[string][]string{"a": {"TestWireA"}}}}
	benches := testList{wire: tests[0].wire, bench: map[string][]string{"a": {"BenchmarkWireA"}}}
	for _, tt := range []struct {
		flag int
		list testList
		want int
	}{{0, tests[0], 2}, {0, benches, 1}, {3, tests[0], 3}, {3, benches, 3}} {
		s := &session{opts: &options{wireParallel: tt.flag}}
		if got := s.wireParallel(tt.list); got != tt.want {
			t.Errorf("-wire-parallel %d, benchmarks %v: %d pairs at once, want %d", tt.flag, len(tt.list.bench) > 0, got, tt.want)
		}
	}
	// One pool: a benchmark in any pair's list makes it one pair at a time.
	s := &session{opts: &options{}}
	if got := s.wireParallel(tests[0], benches); got != 1 {
		t.Errorf("a pool with benchmarks in one pair's list: %d pairs at once, want 1", got)
	}
}
