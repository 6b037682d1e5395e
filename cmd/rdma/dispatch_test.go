package main

import (
	"bytes"
	"io"
	"testing"
)

// TestDispatch: no word runs the default; a prefix selects the first
// command it matches, in the given order, with the words after it; an
// unknown word fails with iproute2's words.
func TestDispatch(t *testing.T) {
	var ran string
	var rest []string
	cmd := func(name string) command {
		return command{name, func(_ io.Writer, _ options, args []string) error {
			ran, rest = name, args
			return nil
		}}
	}
	def := func(_ io.Writer, _ options, args []string) error {
		ran, rest = "default", args
		return nil
	}
	cmds := []command{cmd("show"), cmd("set"), cmd("list"), help("usage text\n")}
	for _, tc := range []struct {
		args []string
		ran  string
		rest int
	}{
		{nil, "default", 0},
		{[]string{"s"}, "show", 0},
		{[]string{"se", "a", "b"}, "set", 2},
		{[]string{"l", "x"}, "list", 1},
	} {
		ran, rest = "", nil
		if err := dispatch(io.Discard, options{}, tc.args, "thing command", def, cmds...); err != nil {
			t.Fatalf("dispatch(%q): %v", tc.args, err)
		}
		if ran != tc.ran || len(rest) != tc.rest {
			t.Errorf("dispatch(%q) ran %q with %q, want %q with %d words", tc.args, ran, rest, tc.ran, tc.rest)
		}
	}
	var out bytes.Buffer
	if err := dispatch(&out, options{}, []string{"h"}, "thing command", def, cmds...); err != nil || out.String() != "usage text\n" {
		t.Errorf("help: %v, %q", err, out.String())
	}
	err := dispatch(io.Discard, options{}, []string{"shows"}, "thing command", def, cmds...)
	if want := "Unknown thing command 'shows'."; err == nil || err.Error() != want {
		t.Errorf("unknown word: %v, want %q", err, want)
	}
	// The tool's own tables keep iproute2's errors.
	for want, args := range map[string][]string{
		"Unknown dev command 'x'.":       {"dev", "x"},
		"Unknown link command 'x'.":      {"link", "x"},
		"Unknown resource command 'x'.":  {"resource", "x"},
		"Unknown statistic command 'x'.": {"statistic", "x"},
		"Unknown parameter 'x'.":         {"statistic", "qp", "x"},
		"Unknown system command 'x'.":    {"system", "x"},
		"Unknown monitor command 'x'.":   {"monitor", "x"},
	} {
		if err := run(io.Discard, args); err == nil || err.Error() != want {
			t.Errorf("rdma %q: %v, want %q", args, err, want)
		}
	}
}
