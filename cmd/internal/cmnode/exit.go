package cmnode

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
)

// ExitError ends a command with a C program's exit status: what the
// program printed has been printed already.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code&0xff) }

// Return is a C program's return value as an error: nil for 0, an
// ExitError otherwise.
func Return(code int) error {
	if code == 0 {
		return nil
	}
	return &ExitError{Code: code}
}

// Exit is main's end: nil exits 0, an ExitError with its status (as
// the C program's int return, truncated to 8 bits by the kernel), any
// other error is printed on stderr and exits 1.
func Exit(stderr io.Writer, err error) {
	if err == nil {
		os.Exit(0)
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.Code & 0xff)
	}
	fmt.Fprintln(stderr, err)
	os.Exit(1)
}

// Atoi is C's atoi: strtol base 10 (leading space, a sign, digits up
// to the first other byte, 0 for none), truncated to an int.
func Atoi(s string) int {
	v, _, _ := cflags.Strtol(s, 10)
	return int(int32(v))
}

// UsageExit is the examples' end on a bad command line: getopt's
// complaint (if any) on stderr, the usage (a format taking the
// program's name) on stdout, and exit status 1.
func UsageExit(stdout, stderr io.Writer, complaint error, usageFormat, prog string) error {
	if complaint != nil {
		fmt.Fprintln(stderr, complaint)
	}
	fmt.Fprintf(stdout, usageFormat, prog)
	return &ExitError{Code: 1}
}

// UsageAddr is how the usage of the examples that take a server and a
// bind address begins (cmatose.c, udaddy.c, rstream.c, riostream.c);
// each goes on with its own options.
const UsageAddr = `usage: %s
	[-s server_address]
	[-b bind_address]
	[-f address_format]
	    name, ip, ipv6, or gid
`
