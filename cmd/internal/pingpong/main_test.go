package pingpong

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// TestMainUsageStatus: a command line that only earns the usage text
// ends with a bare status 1 (nothing for main to print on stderr); one
// with getopt's complaint returns that complaint.
func TestMainUsageStatus(t *testing.T) {
	var out bytes.Buffer
	err := Main(&out, "ibv_rc_pingpong", RC, []string{"a", "b"})
	var ee *cmnode.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Errorf("two servers: %v, want a bare exit status 1", err)
	}
	if !strings.Contains(out.String(), "Usage:") {
		t.Errorf("two servers: no usage text on stdout: %q", out.String())
	}
	out.Reset()
	err = Main(&out, "ibv_rc_pingpong", RC, []string{"-Z"})
	if err == nil || errors.As(err, &ee) || !strings.HasPrefix(err.Error(), "ibv_rc_pingpong: invalid option") {
		t.Errorf("-Z: %v, want getopt's complaint", err)
	}
}
