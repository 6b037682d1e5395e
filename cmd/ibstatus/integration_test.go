package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs"
	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs/ibsysfstest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func oursRun(t *testing.T, path string, args ...string) ibsysfstest.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, ibsysfs.DefaultRoot, append([]string{path}, args...))
	return ibsysfstest.Result{Stdout: stdout.String(), Stderr: stderr.String(), Exit: ibsysfstest.ExitStatus(t, err)}
}

// TestIntegrationIbstatus compares our ibstatus with infiniband-diags'
// script on the VM's rxe devices: every form, and the errors.
func TestIntegrationIbstatus(t *testing.T) {
	testenv.RequireRDMA(t)
	oracle := testenv.Oracle(t, "ibstatus")
	all := ibsysfstest.Oracle(t, oracle)
	if all.Exit != 0 || !strings.HasPrefix(all.Stdout, "Infiniband device '") {
		t.Fatalf("ibstatus shows no device: %+v", all)
	}
	compareIbstatus(t, oracle, strings.SplitN(strings.TrimPrefix(all.Stdout, "Infiniband device '"), "'", 2)[0])
}

// TestIntegrationSIWIbstatus compares them on the siw guest's iWARP
// devices (the script reads sysfs, where siw has no LID and no SM).
func TestIntegrationSIWIbstatus(t *testing.T) {
	e := testenv.SIW(t)
	oracle := testenv.Oracle(t, "ibstatus")
	for _, dev := range []string{e.Dev, e.PeerDev} {
		if r := ibsysfstest.Oracle(t, oracle, dev); r.Exit != 0 || !strings.HasPrefix(r.Stdout, "Infiniband device '"+dev+"'") {
			t.Fatalf("ibstatus %s: %+v", dev, r)
		}
		compareIbstatus(t, oracle, dev)
	}
}

// compareIbstatus compares every form and error, naming dev.
func compareIbstatus(t *testing.T, oracle, dev string) {
	t.Helper()
	for _, args := range [][]string{
		{}, {dev}, {dev + ":1"}, {dev + ":"}, {dev + ":x:1"}, {dev + ":1", dev},
		// errors
		{dev + ":2"}, {"nosuchdev"}, {"nosuchdev:1"}, {":1"}, {dev, "nosuchdev", dev}, {"-h"}, {"-x"},
	} {
		want := ibsysfstest.Oracle(t, oracle, args...)
		got := oursRun(t, oracle, args...)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("ibstatus %q differs from infiniband-diags' (-C +ours):\n%s", args, d)
		}
	}
}
