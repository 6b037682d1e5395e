package cmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// Straced is s, a program, run under strace (a shell script in dir that
// execs `strace -f -y -x -s 4` on it), writing its log to dir/name.log,
// the path returned; testenv.ParseStrace reads the log.
func Straced(tb testing.TB, dir, name string, s Side) (Side, string) {
	tb.Helper()
	if s.Oracle == "" {
		tb.Fatalf("cmtest: %v runs in-process: strace needs a program", s)
	}
	strace := testenv.Oracle(tb, "strace")
	log := filepath.Join(dir, name+".log")
	script := filepath.Join(dir, name+".sh")
	body := fmt.Sprintf("#!/bin/sh\nexec %s -f -y -x -s 4 -o %s %s \"$@\"\n", strace, log, s.Oracle)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		tb.Fatal(err)
	}
	s.Oracle = script
	return s, log
}

// StraceCounts reads the log Straced wrote.
func StraceCounts(tb testing.TB, log string) testenv.Syscalls {
	tb.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		tb.Fatal(err)
	}
	return testenv.ParseStrace(string(b))
}
