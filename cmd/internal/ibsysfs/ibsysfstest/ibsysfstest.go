// Package ibsysfstest runs the infiniband-diags drop-ins' golden cases:
// each case names a fixture tree of package ibsysfs's testdata and a
// command line, and the files capture.sh recorded from the C tool with
// that tree mounted on /sys/class/infiniband are what ours must print.
package ibsysfstest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
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

// ExitStatus is the status main exits with for run's error (a
// cmnode.ExitError's code; nil is 0). Any other error fails the test.
func ExitStatus(t *testing.T, err error) int {
	t.Helper()
	var ee *cmnode.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code & 0xff
	}
	t.Fatalf("run: %v", err)
	return 0
}

// Oracle runs the C tool at path and returns its streams and exit status.
func Oracle(t *testing.T, path string, args ...string) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exit := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s %q: %v", path, args, err)
		}
		exit = ee.ExitCode()
	}
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Exit: exit}
}

// Golden runs every case of testdata/cases with run (a command's run, as
// prog) on its fixture tree and compares stdout, stderr and the exit
// status with the C tool's, in testdata/golden.
func Golden(t *testing.T, prog string, run func(stdout, stderr io.Writer, root string, args []string) error) {
	for _, c := range Cases(t, "testdata/cases") {
		t.Run(c.Name, func(t *testing.T) {
			root := Root(t, c)
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, root, append([]string{prog}, c.Args...))
			Check(t, "testdata/golden", c, root, Result{Stdout: stdout.String(), Stderr: stderr.String(), Exit: ExitStatus(t, err)})
		})
	}
}
