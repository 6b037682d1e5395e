// Package ibsysfstest runs the infiniband-diags drop-ins' golden cases:
// each case names a fixture tree of package ibsysfs's testdata and a
// command line, and the files capture.sh recorded from the C tool with
// that tree mounted on /sys/class/infiniband are what ours must print.
package ibsysfstest

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs"
)

// Case is one line of a cases file: "name root args...".
type Case struct {
	Name string
	Root string   // a fixture tree, "empty" or "none"
	Args []string // without the program name
}

// Result is what a run printed and its exit status.
type Result struct {
	Stdout, Stderr string
	Exit           int
}

// Cases reads a cases file.
func Cases(t *testing.T, file string) []Case {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cs []Case
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 2 {
			t.Fatalf("%s: line %q has no root", file, l)
		}
		cs = append(cs, Case{Name: f[0], Root: f[1], Args: f[2:]})
	}
	if len(cs) == 0 {
		t.Fatalf("%s has no cases", file)
	}
	return cs
}

// fixtures is package ibsysfs's testdata.
func fixtures() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Root is the directory a case's tool reads: a fixture tree, a new empty
// directory, or one that does not exist.
func Root(t *testing.T, c Case) string {
	switch c.Root {
	case "empty":
		return t.TempDir()
	case "none":
		return filepath.Join(t.TempDir(), "none")
	}
	return filepath.Join(fixtures(), c.Root)
}

var pid = regexp.MustCompile(`\[[0-9]+\]`)

// Check compares a run of case c over root with the golden files in dir,
// with the pid masked and root written as /sys/class/infiniband.
func Check(t *testing.T, dir string, c Case, root string, got Result) {
	t.Helper()
	norm := func(s string) string {
		return pid.ReplaceAllString(strings.ReplaceAll(s, root, ibsysfs.DefaultRoot), "[PID]")
	}
	read := func(ext string) string {
		b, err := os.ReadFile(filepath.Join(dir, c.Name+ext))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	exit, err := strconv.Atoi(strings.TrimSpace(read(".exit")))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Stdout: read(".stdout"), Stderr: read(".stderr"), Exit: exit}
	got.Stdout, got.Stderr = norm(got.Stdout), norm(got.Stderr)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%q on %s differs from infiniband-diags' (-C +ours):\n%s", c.Args, c.Root, d)
	}
}
