package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs/ibsysfstest"
)

// exitStatus is the status main exits with for run's error.
func exitStatus(t *testing.T, err error) int {
	t.Helper()
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	t.Fatalf("run: %v", err)
	return 0
}

// TestGolden runs every case of testdata/cases on its fixture tree and
// compares stdout, stderr and the exit status with infiniband-diags'.
func TestGolden(t *testing.T) {
	for _, c := range ibsysfstest.Cases(t, "testdata/cases") {
		t.Run(c.Name, func(t *testing.T) {
			root := ibsysfstest.Root(t, c)
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, root, append([]string{"ibstat"}, c.Args...))
			ibsysfstest.Check(t, "testdata/golden", c, root, ibsysfstest.Result{
				Stdout: stdout.String(), Stderr: stderr.String(), Exit: exitStatus(t, err)})
		})
	}
}
