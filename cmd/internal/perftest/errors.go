package perftest

import "github.com/rdmastack/rdmastack/cmd/internal/cmnode"

// Failure ends a program as perftest ends: Stderr is what it prints on
// stderr last, Code its exit status.
type Failure struct {
	Stderr string
	Code   int
}

func (f *Failure) Error() string {
	if f.Stderr != "" {
		return f.Stderr
	}
	return (&cmnode.ExitError{Code: f.Code}).Error()
}

// fail is a failure with status 1 (perftest's FAILURE).
func fail(msg string) error { return &Failure{Stderr: msg, Code: 1} }
