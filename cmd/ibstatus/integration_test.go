package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs"
	"github.com/rdmastack/rdmastack/internal/testenv"
)

// result is one run: its streams and exit status.
type result struct {
	Stdout, Stderr string
	Exit           int
}

func oracleRun(t *testing.T, path string, args ...string) result {
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
	return result{stdout.String(), stderr.String(), exit}
}

func oursRun(t *testing.T, path string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, ibsysfs.DefaultRoot, append([]string{path}, args...))
	return result{stdout.String(), stderr.String(), exitStatus(t, err)}
}

// TestIntegrationIbstatus compares our ibstatus with infiniband-diags'
// script on the VM's rxe devices: every form, and the errors.
func TestIntegrationIbstatus(t *testing.T) {
	testenv.RequireRDMA(t)
	oracle := testenv.Oracle(t, "ibstatus")
	all := oracleRun(t, oracle)
	if all.Exit != 0 || !strings.HasPrefix(all.Stdout, "Infiniband device '") {
		t.Fatalf("ibstatus shows no device: %+v", all)
	}
	dev := strings.SplitN(strings.TrimPrefix(all.Stdout, "Infiniband device '"), "'", 2)[0]
	for _, args := range [][]string{
		{}, {dev}, {dev + ":1"}, {dev + ":"}, {dev + ":x:1"}, {dev + ":1", dev},
		// errors
		{dev + ":2"}, {"nosuchdev"}, {"nosuchdev:1"}, {":1"}, {dev, "nosuchdev", dev}, {"-h"}, {"-x"},
	} {
		want := oracleRun(t, oracle, args...)
		got := oursRun(t, oracle, args...)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("ibstatus %q differs from infiniband-diags' (-C +ours):\n%s", args, d)
		}
	}
}
