package main

import (
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs/ibsysfstest"
)

// TestGolden runs every case of testdata/cases on its fixture tree and
// compares stdout, stderr and the exit status with infiniband-diags'.
func TestGolden(t *testing.T) { ibsysfstest.Golden(t, "ibstatus", run) }
