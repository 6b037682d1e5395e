package testenv

import (
	"testing"
	"time"
)

// TestSelfUsage: the process's CPU time grows while it spins, and its
// switch count never goes back.
func TestSelfUsage(t *testing.T) {
	sw0, cpu0, err := SelfUsage()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	time.Sleep(time.Millisecond) // at least one voluntary switch
	sw1, cpu1, err := SelfUsage()
	if err != nil {
		t.Fatal(err)
	}
	if cpu1-cpu0 < 10*time.Millisecond || sw1 < sw0 {
		t.Fatalf("after 50 ms of spinning: CPU %v -> %v, switches %d -> %d", cpu0, cpu1, sw0, sw1)
	}
	if got := SelfCPU(t); got < cpu1 {
		t.Fatalf("SelfCPU %v, below the %v before it", got, cpu1)
	}
}
