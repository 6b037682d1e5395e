package main

import (
	"bytes"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs/ibsysfstest"
)

// TestGolden runs every case of testdata/cases on its fixture tree and
// compares stdout, stderr and the exit status with infiniband-diags'.
func TestGolden(t *testing.T) {
	for _, c := range ibsysfstest.Cases(t, "testdata/cases") {
		t.Run(c.Name, func(t *testing.T) {
			root := ibsysfstest.Root(t, c)
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, root, append([]string{"ibstat"}, c.Args...))
			ibsysfstest.Check(t, "testdata/golden", c, root, ibsysfstest.Result{
				Stdout: stdout.String(), Stderr: stderr.String(), Exit: ibsysfstest.ExitStatus(t, err)})
		})
	}
}
