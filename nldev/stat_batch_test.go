package nldev

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestPortCountersOf: one batch answers each port as PortCounters would,
// port 0 is refused without being sent, and an unknown port or device
// fails alone.
func TestPortCountersOf(t *testing.T) {
	k := newStatKernel(t)
	c := dialStat(t, k)
	ports := []PortID{{3, 1}, {3, 0}, {3, 2}, {3, 3}, {9, 1}}
	got, errs := c.PortCountersOf(ports)
	if len(got) != len(ports) || len(errs) != len(ports) {
		t.Fatalf("PortCountersOf returned %d and %d answers for %d ports", len(got), len(errs), len(ports))
	}
	for i, p := range ports {
		one, err := c.PortCounters(p.Dev, p.Port)
		if diff := cmp.Diff(one, got[i]); diff != "" {
			t.Errorf("port %v (-PortCounters +PortCountersOf):\n%s", p, diff)
		}
		if (err == nil) != (errs[i] == nil) || (err != nil && err.Error() != errs[i].Error()) {
			t.Errorf("port %v: error %v, PortCounters says %v", p, errs[i], err)
		}
	}
	if errs[0] != nil || errs[2] != nil || len(got[0]) == 0 {
		t.Fatalf("good ports failed: %v, %v", errs[0], errs[2])
	}
	if !errors.Is(errs[1], unix.EINVAL) {
		t.Errorf("port 0: %v, want EINVAL", errs[1])
	}
	for _, i := range []int{3, 4} {
		if !errors.Is(errs[i], os.ErrNotExist) {
			t.Errorf("port %v: %v, want os.ErrNotExist", ports[i], errs[i])
		}
	}
	k.noHW, k.sent = true, nil
	_, errs = c.PortCountersOf([]PortID{{3, 1}, {3, 2}})
	for i, err := range errs {
		if !errors.Is(err, ErrNoCounters) {
			t.Errorf("port %d without hardware counters: %v, want ErrNoCounters", i+1, err)
		}
	}
	if got, errs := c.PortCountersOf(nil); len(got) != 0 || len(errs) != 0 {
		t.Errorf("PortCountersOf(nil) = %v, %v", got, errs)
	}
}
