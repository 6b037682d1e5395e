package testenv

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestStdout: what fn prints comes back, large output included (read as
// it is written), and os.Stdout is restored.
func TestStdout(t *testing.T) {
	saved := os.Stdout
	big := strings.Repeat("x", 1<<20)
	got := Stdout(t, func() {
		fmt.Println("hello")
		fmt.Print(big)
	})
	if got != "hello\n"+big {
		t.Fatalf("captured %d bytes starting %.20q", len(got), got)
	}
	if os.Stdout != saved {
		t.Fatal("os.Stdout was not restored")
	}
}
