package cmtest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// Parsed runs parse, a program's command-line parser writing on stdout
// and stderr, and checks that it ended with exit status code (that of
// an *cmnode.ExitError, 0 for nil; both as the kernel truncates them to
// 8 bits) and printed stdout and stderr. It returns the parser's config
// and whether the status was 0, when the caller checks the config. An
// error that is not an exit status fails t at once.
func Parsed[C any](t *testing.T, args []string, code int, stdout, stderr string, parse func(stdout, stderr io.Writer) (C, error)) (C, bool) {
	t.Helper()
	var so, se bytes.Buffer
	c, err := parse(&so, &se)
	var ee *cmnode.ExitError
	got := 0
	if errors.As(err, &ee) {
		got = ee.Code & 0xff
	} else if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if got != code&0xff || so.String() != stdout || se.String() != stderr {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q",
			args, got, so.String(), se.String(), code&0xff, stdout, stderr)
	}
	return c, got == 0
}
