package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"rdma":          "rdma",
		"-j":            "-j",
		"/usr/bin/rdma": "/usr/bin/rdma",
		"a,b:c@d%e+f":   "a,b:c@d%e+f",
		"":              "''",
		"two words":     "'two words'",
		"it's":          `'it'\''s'`,
		"$HOME":         "'$HOME'",
		"a=b":           "'a=b'",
		"~":             "'~'",
		"*.go":          "'*.go'",
		"line\nbreak":   "'line\nbreak'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestShellJoinRoundTrip checks with the host's sh that joined arguments
// come out as they went in.
func TestShellJoinRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	args := []string{"rdma", "-j", "dev show", "", "it's", `"dq"`, "$HOME", "`id`", "a\\b", "*", "x;y", "new\nline", "tab\tx", "a=b"}
	out, err := exec.Command(sh, "-c", `for a in `+shellJoin(args)+`; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if diff := cmp.Diff(args, got); diff != "" {
		t.Errorf("round trip through sh (-want +got):\n%s", diff)
	}
}
