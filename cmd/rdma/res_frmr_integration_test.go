package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestIntegrationFRMRPoolsCommands: the VM's kernels (6.1, 6.12) lack the
// FRMR pool commands (Linux 7.0). "rdma res show frmr_pools" and "rdma
// res set frmr_pools" fail with one line naming the release and print
// nothing, and the devices are as before. (iproute2 6.1, the oracle, has
// no frmr_pools at all.)
func TestIntegrationFRMRPoolsCommands(t *testing.T) {
	testenv.RequireRDMA(t)
	var ma, mi int
	fmt.Sscanf(testenv.KernelRelease(), "%d.%d", &ma, &mi)
	if ma*100+mi >= 700 {
		// A kernel with FRMR pools: rxe keeps none, so the show is empty.
		for _, args := range [][]string{{"res", "show", "frmr_pools"}, {"-j", "res", "show", "frmr_pools"}} {
			out, ok := ours(t, args...)
			if !ok || (out != "" && out != "[]\n") {
				t.Errorf("%q on %s: %q, %v", args, testenv.KernelRelease(), out, ok)
			}
		}
		return
	}
	before, ok := ours(t, "-d", "dev", "show")
	if !ok {
		t.Fatal("dev show failed")
	}
	for _, args := range [][]string{
		{"res", "show", "frmr_pools"},
		{"-d", "res", "show", "frmr_pools", "dev", "rxe0"},
		{"res", "show", "frmr_pools", "dev", "rxe1", "queue", "0"},
		{"res", "set", "frmr_pools", "dev", "rxe0", "aging", "30"},
		{"res", "set", "frmr_pools", "dev", "rxe1", "pinned", "0:1:0:0", "2"},
	} {
		var out strings.Builder
		err := run(&out, args)
		if !errors.Is(err, nldev.ErrNotSupported) || !strings.Contains(err.Error(), "FRMR pools need Linux 7.0") ||
			strings.Contains(err.Error(), "\n") || out.Len() != 0 {
			t.Errorf("rdma %s on %s: stdout %q, error %v", strings.Join(args, " "), testenv.KernelRelease(), out.String(), err)
		}
	}
	// Bad arguments are reported as iproute2 does, before any request.
	for args, want := range map[string]string{
		"res set frmr_pools dev rxe0 aging 0":          "Setting the aging period to zero is not supported.",
		"res set frmr_pools dev rxe0 pinned 1:2 3":     "Invalid pool key: 1:2, expected 4 fields",
		"res set frmr_pools dev nosuch aging 5":        "Wrong device name - nosuch",
		"res show frmr_pools dev nosuch":               "Wrong device name - nosuch",
		"res set frmr_pools dev rxe0 pinned 0:1:0:0 x": "Invalid pinned value: x",
	} {
		var out strings.Builder
		if err := run(&out, strings.Fields(args)); err == nil || err.Error() != want {
			t.Errorf("rdma %s: %v, want %q", args, err, want)
		}
	}
	if after, _ := ours(t, "-d", "dev", "show"); after != before {
		t.Errorf("devices changed:\n%s\nthen\n%s", before, after)
	}
}
