package nldev

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationFRMRPools: the VM's kernels (6.1, 6.12) lack the FRMR
// pool commands, which came with Linux 7.0: every call fails with
// ErrNotSupported naming the release, whatever the device, and nothing
// changes. On a kernel that has them, rxe keeps no FRMR pools.
func TestIntegrationFRMRPools(t *testing.T) {
	c := dialVM(t)
	before, err := c.Devices()
	if err != nil || len(before) == 0 {
		t.Fatalf("Devices: %v, %v", before, err)
	}
	dev := before[0].Index
	key := FRMRPoolKey{NumDMABlocks: 1}
	calls := map[string]func() error{
		"pools":          func() error { return second(c.FRMRPools(dev)) },
		"pools, details": func() error { return second(c.FRMRPools(dev, DriverDetails)) },
		"aging":          func() error { return c.SetFRMRAgingPeriod(dev, 30) },
		"pinned":         func() error { return c.SetFRMRPinned(dev, key, 1) },
	}
	if !kernelAtLeast(7, 0) {
		calls["pools of no device"] = func() error { return second(c.FRMRPools(4242)) }
		for name, call := range calls {
			err := call()
			if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 7.0") ||
				strings.Contains(err.Error(), "\n") {
				t.Errorf("%s on %s: %v, want ErrNotSupported naming Linux 7.0", name, testenv.KernelRelease(), err)
			}
		}
		// A fresh client probes again and comes to the same answer.
		c2 := dialVM(t)
		if err := c2.SetFRMRPinned(dev, key, 0); !errors.Is(err, ErrNotSupported) {
			t.Errorf("pinned on a new client: %v", err)
		}
	} else {
		pools, err := c.FRMRPools(dev)
		if err != nil || len(pools) != 0 {
			t.Errorf("FRMR pools of rxe: %+v, %v", pools, err)
		}
		if _, err := c.FRMRPools(4242); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("FRMR pools of no device: %v", err)
		}
		// rxe has no FRMR pools: the kernel refuses the aging period.
		if err := c.SetFRMRAgingPeriod(dev, 30); !errors.Is(err, unix.EINVAL) || errors.Is(err, ErrNotSupported) {
			t.Errorf("aging on rxe: %v", err)
		}
	}
	after, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("devices changed (-before +after):\n%s", diff)
	}
}
