package rstream

import (
	"strings"
	"testing"
)

// TestParseSetupLine: BenchmarkRsocketSetup reads rsetup.c's line and
// setupLoop's alike, and refuses what is not one.
func TestParseSetupLine(t *testing.T) {
	l, err := parseSetupLine("50 1.250000 612 0.731000\n")
	if err != nil || l != (setupLine{conns: 50, seconds: 1.25, switches: 612, cpu: 0.731}) {
		t.Fatalf("parsed %+v, %v", l, err)
	}
	for _, bad := range []string{"", "rconnect: Connection refused", "50 0.000000 1 0.1", "50 x 1 0.1"} {
		if _, err := parseSetupLine(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	var sb strings.Builder
	if err := setupLoop(&sb, []string{"127.0.0.1", "1"}); err == nil || sb.Len() != 0 {
		t.Errorf("two arguments: %v, printed %q", err, sb.String())
	}
}
