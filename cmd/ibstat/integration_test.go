package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs"
	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs/ibsysfstest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

var pidRE = regexp.MustCompile(`\[[0-9]+\]`)

// oracleRun is the C tool's run, its pids masked.
func oracleRun(t *testing.T, path string, args ...string) ibsysfstest.Result {
	t.Helper()
	r := ibsysfstest.Oracle(t, path, args...)
	r.Stderr = pidRE.ReplaceAllString(r.Stderr, "[PID]")
	return r
}

func oursRun(t *testing.T, path string, args ...string) ibsysfstest.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, ibsysfs.DefaultRoot, append([]string{path}, args...))
	return ibsysfstest.Result{Stdout: stdout.String(), Stderr: pidRE.ReplaceAllString(stderr.String(), "[PID]"), Exit: ibsysfstest.ExitStatus(t, err)}
}

// TestIntegrationIbstat compares our ibstat with infiniband-diags' on the
// VM's rxe devices: stdout, stderr (pids masked) and exit status of every
// form and error.
func TestIntegrationIbstat(t *testing.T) {
	testenv.RequireRDMA(t)
	oracle := testenv.Oracle(t, "ibstat")
	list := oracleRun(t, oracle, "-l")
	cas := strings.Fields(list.Stdout)
	if list.Exit != 0 || len(cas) == 0 {
		t.Fatalf("ibstat -l lists no CA: %+v", list)
	}
	compareIbstat(t, oracle, cas[0], cas[len(cas)-1])
}

// TestIntegrationSIWIbstat compares them on the siw guest's iWARP
// devices. libibumad lists only node types 1 to 3 (CA, switch, router):
// a siw device (node type 4, RNIC) is no CA to ibstat, so the list is
// empty and naming one fails as naming an unknown CA does.
func TestIntegrationSIWIbstat(t *testing.T) {
	e := testenv.SIW(t)
	oracle := testenv.Oracle(t, "ibstat")
	if list := oracleRun(t, oracle, "-l"); list.Exit != 0 || list.Stdout != "" {
		t.Fatalf("ibstat -l on a siw guest: %+v, want no CA", list)
	}
	compareIbstat(t, oracle, e.Dev, e.PeerDev)
}

// compareIbstat compares every form and error, naming the CAs ca and
// last.
func compareIbstat(t *testing.T, oracle, ca, last string) {
	t.Helper()
	for _, args := range [][]string{
		{}, {"-l"}, {"-s"}, {"-p"}, {"--list_of_cas"}, {"--short"}, {"--port_list"},
		{ca}, {"-s", ca}, {"-l", ca}, {"-p", ca}, {ca, "1"}, {ca, "0x1"}, {ca, "1", "extra"},
		{"-s", ca, "5"}, {last, "1"}, {"-d", "-d", ca, "1"}, {"-dd", "-p"}, {"-v", "-z", "/nonexistent", ca},
		// errors
		{ca, "0"}, {ca, "2"}, {ca, "-1"}, {"nosuchca"}, {ca + "x"}, {ca[:len(ca)-1]},
		{"-h"}, {"--help"}, {"-V"}, {"-x"}, {"--nosuch"}, {"-z"},
	} {
		want := oracleRun(t, oracle, args...)
		got := oursRun(t, oracle, args...)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("ibstat %q differs from infiniband-diags' (-C +ours):\n%s", args, d)
		}
	}
}
