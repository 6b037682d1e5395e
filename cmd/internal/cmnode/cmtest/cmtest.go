// Package cmtest holds what the rdmacm-utils drop-ins' VM tests share:
// the rxe address both ends use, a wait for a listener, and a runner
// for either side (ours in-process, or rdma-core's program).
package cmtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// RxeAddr is the IPv4 address of the first RDMA device's netdev and the
// device's index (rxetest.Addr).
func RxeAddr(t testing.TB) (netip.Addr, uint32) {
	t.Helper()
	return rxetest.Addr(t)
}

// WaitListen waits until an rdma_cm id of dev listens on addr, and then
// listenSettle more. The kernel's rdma_listen shows the id as listening
// (nldev's state) before it registers the service with the IB CM
// (cma_ib_listen): a request in between is rejected as for an unknown
// service (reason 8). That is a few instructions and an allocation, but
// a guest on a busy host was preempted there once (rping, 6.1).
func WaitListen(dev uint32, addr netip.AddrPort, d time.Duration) error {
	if err := waitListen(dev, addr, d); err != nil {
		return err
	}
	time.Sleep(listenSettle)
	return nil
}

// listenSettle is how long WaitListen lets a listen it saw finish.
const listenSettle = 50 * time.Millisecond

func waitListen(dev uint32, addr netip.AddrPort, d time.Duration) error {
	c, err := nldev.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ids, err := c.CMIDs(dev)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id.State == nldev.CMListen && id.SrcAddr == addr {
				return nil
			}
		}
	}
	return fmt.Errorf("nothing listens on %v after %v", addr, d)
}

// NoCMIDsLeft makes t fail, at its end, if rdma_cm ids of dev are
// still there 5 s after its cleanups (processes that ended may take a
// moment to let go of theirs). Call it first, before what it checks.
func NoCMIDsLeft(t testing.TB, dev uint32) {
	t.Helper()
	noneLeft(t, "cm_id", func(c *nldev.Client) ([]nldev.CMID, error) { return c.CMIDs(dev) })
}

// noneLeft makes t fail, at its end, if list still finds objects 5 s
// after t's cleanups; what names them in messages.
func noneLeft[T any](t testing.TB, what string, list func(*nldev.Client) ([]T, error)) {
	t.Helper()
	t.Cleanup(func() {
		c, err := nldev.Dial()
		if err != nil {
			t.Errorf("nldev: %v", err)
			return
		}
		defer c.Close()
		var left []T
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if left, err = list(c); err != nil {
				t.Errorf("%ss: %v", what, err)
				return
			}
			if len(left) == 0 || time.Now().After(deadline) {
				break
			}
		}
		for _, o := range left {
			t.Errorf("%s left: %+v", what, o)
		}
	})
}

var nextPort atomic.Int32

func init() { nextPort.Store(20000) }

// Port is a port no other test of the process uses.
func Port() uint16 { return uint16(nextPort.Add(1)) }

// MainFunc is an engine's Main.
type MainFunc func(stdout, stderr io.Writer, args []string) error

// Side is one end: ours in-process (Main), or a program: rdma-core's,
// or ours as a process (Self).
type Side struct {
	Name   string
	Main   MainFunc // ours
	Oracle string   // the program's path
	Env    []string // added to the program's environment
	Netns  string   // a program run in this network namespace (its path), through nsenter
}

// InNetns is the side run in the network namespace at path: a program,
// or ours as a process (Self); an in-process side cannot move.
func (s Side) InNetns(path string) Side {
	if s.Main != nil {
		panic("cmtest: an in-process side cannot run in another namespace: use Self")
	}
	s.Netns, s.Name = path, s.Name+"@peer"
	return s
}

// selfEnv makes a test binary that RunSelf's TestMain runs be the
// command rather than the tests.
const selfEnv = "RDMASTACK_CMTEST_SELF"

// Self is ours as a process: the test binary again, which RunSelf (in
// its TestMain) turns into the command. Unlike an in-process side, one
// that never ends can be killed, and the kernel then frees its ids.
func Self(name string) Side {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return Side{Name: name, Oracle: exe, Env: []string{selfEnv + "=1"}}
}

// IsSelf says whether s is the test binary as ours (Self), which takes
// the program's name as its first argument.
func (s Side) IsSelf() bool { return slices.Contains(s.Env, selfEnv+"=1") }

// RunSelf, called first in TestMain, runs main with the process's
// arguments and exits when the process is a Self side; otherwise it
// returns.
func RunSelf(main MainFunc) {
	if os.Getenv(selfEnv) == "1" {
		cmnode.Exit(os.Stderr, main(os.Stdout, os.Stderr, os.Args[1:]))
	}
}

func (s Side) String() string { return s.Name }

// Result is how one side ended.
type Result struct {
	Stdout, Stderr string
	Code           int // exit status
	Err            error
	Usage          Usage // a program's; zero for an in-process side
}

// Usage is what a program's process used (its rusage).
type Usage struct {
	Voluntary, Involuntary int64         // context switches
	CPU                    time.Duration // user and system time
}

// Switches is the number of context switches, of either kind.
func (u Usage) Switches() int64 { return u.Voluntary + u.Involuntary }

func usageOf(ps *os.ProcessState) Usage {
	if ps == nil {
		return Usage{}
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return Usage{}
	}
	return Usage{Voluntary: ru.Nvcsw, Involuntary: ru.Nivcsw, CPU: ps.UserTime() + ps.SystemTime()}
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d (%v)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Err, r.Stdout, r.Stderr)
}

// Start runs the side with args and returns a function that waits
// (at most limit) for its end.
func (s Side) Start(args []string, limit time.Duration) func() Result {
	done := make(chan Result, 1)
	if s.Main != nil {
		so, se := &testenv.Buffer{}, &testenv.Buffer{}
		go func() {
			err := s.Main(so, se, args)
			r := Result{Err: err}
			var ee *cmnode.ExitError
			if errors.As(err, &ee) {
				r.Code = ee.Code & 0xff
			} else if err != nil {
				r.Code = 1
			}
			r.Stdout, r.Stderr = so.String(), se.String()
			done <- r
		}()
		return func() Result {
			select {
			case r := <-done:
				return r
			case <-time.After(limit):
				// Where every goroutine is, to show where ours is stuck.
				stacks := make([]byte, 1<<20)
				stacks = stacks[:runtime.Stack(stacks, true)]
				return Result{Stdout: so.String(), Stderr: se.String() + "\n" + string(stacks), Code: -1,
					Err: fmt.Errorf("ours: no end after %v", limit)}
			}
		}
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(s.Oracle, args...)
	if s.Netns != "" {
		cmd = exec.Command("nsenter", append([]string{"--net=" + s.Netns, "--", s.Oracle}, args...)...)
	}
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A Go side that hangs dumps every goroutine's stack on SIGQUIT.
	cmd.Env = append(append(os.Environ(), "GOTRACEBACK=all"), s.Env...)
	if err := cmd.Start(); err != nil {
		done <- Result{Code: -1, Err: err}
	} else {
		go func() {
			err := cmd.Wait()
			r := Result{Stdout: out.String(), Stderr: errb.String(), Err: err, Usage: usageOf(cmd.ProcessState)}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				r.Code = ee.ExitCode()
			}
			done <- r
		}()
	}
	return func() Result {
		select {
		case r := <-done:
			return r
		case <-time.After(limit):
			// SIGQUIT first: a Go program prints where it is stuck.
			cmd.Process.Signal(syscall.SIGQUIT)
			var r Result
			select {
			case r = <-done:
			case <-time.After(2 * time.Second):
				cmd.Process.Kill()
				r = <-done
			}
			r.Code, r.Err = -1, fmt.Errorf("%s %s: no end after %v", s.Oracle, strings.Join(args, " "), limit)
			return r
		}
	}
}
