package cmnode

import (
	"bytes"
	"errors"
	"testing"
)

// TestUsageExit: the complaint on stderr (none when nil), the usage with
// the program's name on stdout, status 1.
func TestUsageExit(t *testing.T) {
	for _, tc := range []struct {
		complaint error
		wantErr   string
	}{
		{errors.New("prog: invalid option -- 'x'"), "prog: invalid option -- 'x'\n"},
		{nil, ""},
	} {
		var out, errb bytes.Buffer
		err := UsageExit(&out, &errb, tc.complaint, "usage: %s\n\t[-s]\n", "prog")
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 1 {
			t.Errorf("UsageExit(%v) = %v, want exit status 1", tc.complaint, err)
		}
		if out.String() != "usage: prog\n\t[-s]\n" || errb.String() != tc.wantErr {
			t.Errorf("UsageExit(%v) printed %q on stdout, %q on stderr", tc.complaint, out.String(), errb.String())
		}
	}
}
