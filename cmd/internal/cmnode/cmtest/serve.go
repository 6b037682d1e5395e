package cmtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// Serve starts a program side (Oracle) that serves until it is stopped,
// as cmtime's server, which never ends on its own. stop ends it with
// SIGTERM (SIGKILL 5 s later) and returns how it ended; Code is then
// the signal's number plus 128, as a shell reports it. Calling stop
// more than once returns the first result.
func (s Side) Serve(args []string) (stop func() Result) {
	var out, errb bytes.Buffer
	cmd := exec.Command(s.Oracle, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(append(os.Environ(), "GOTRACEBACK=all"), s.Env...)
	if err := cmd.Start(); err != nil {
		return func() Result { return Result{Code: -1, Err: err} }
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var r *Result
	return func() Result {
		if r != nil {
			return *r
		}
		cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			err = <-done
		}
		res := Result{Stdout: out.String(), Stderr: errb.String(), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			res.Code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				res.Code = 128 + int(ws.Signal())
			}
		}
		r = &res
		return res
	}
}

// NoQPsLeft makes t fail, at its end, if RC or UD QPs of user processes
// (not the kernel's own) on dev are still there 5 s after its
// cleanups. Call it first, before what it checks.
func NoQPsLeft(t testing.TB, dev uint32) {
	t.Helper()
	noneLeft(t, "QP", func(c *nldev.Client) ([]nldev.QP, error) {
		qps, err := c.QPs(dev)
		var left []nldev.QP
		for _, qp := range qps {
			if (qp.Type == ib.QPTypeRC || qp.Type == ib.QPTypeUD) && qp.Owner.PID != 0 {
				left = append(left, qp)
			}
		}
		return left, err
	})
}

// Alternate runs each pair (server, client) once per round, in the
// pairs' order on rounds 0 and 3 (mod 4) and in reverse on rounds 1 and
// 2: ABBA order, so that drift over the run weighs on all alike.
func Alternate(rounds int, pairs [][2]Side, run func(server, client Side)) {
	for r := range rounds {
		for i := range pairs {
			p := pairs[i]
			if r%4 == 1 || r%4 == 2 {
				p = pairs[len(pairs)-1-i]
			}
			run(p[0], p[1])
		}
	}
}
