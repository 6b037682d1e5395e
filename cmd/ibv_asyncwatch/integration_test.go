package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestMain lets a test run this test binary as ibv_asyncwatch itself
// (RDMASTACK_AS_ASYNCWATCH=1), beside rdma-core's, as a process that a
// signal can kill.
func TestMain(m *testing.M) {
	if os.Getenv("RDMASTACK_AS_ASYNCWATCH") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// watcher is one ibv_asyncwatch running in the background: ours or
// rdma-core's.
type watcher struct {
	name     string
	cmd      *exec.Cmd
	out, err testenv.Buffer
	done     chan struct{}
	state    *os.ProcessState // once done is closed
}

func command(t *testing.T, ours bool, args ...string) *exec.Cmd {
	t.Helper()
	if !ours {
		return exec.Command(testenv.Oracle(t, "ibv_asyncwatch"), args...)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "RDMASTACK_AS_ASYNCWATCH=1")
	return cmd
}

func start(t *testing.T, ours bool, args ...string) *watcher {
	t.Helper()
	w := &watcher{name: "rdma-core", cmd: command(t, ours, args...), done: make(chan struct{})}
	if ours {
		w.name = "ours"
	}
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", w.name, err)
	}
	go func() {
		w.cmd.Wait()
		w.state = w.cmd.ProcessState
		close(w.done)
	}()
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		<-w.done
	})
	return w
}

func (w *watcher) lines() []string {
	s := w.out.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.Split(s[:i], "\n")
	}
	return nil
}

func (w *watcher) running() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// waitLines waits until the watcher has printed n lines.
func (w *watcher) waitLines(t *testing.T, n int) []string {
	t.Helper()
	testenv.WaitFor(t, fmt.Sprintf("%s to print %d lines (has %q, stderr %q)", w.name, n, w.lines(), w.err.String()),
		func() bool { return len(w.lines()) >= n })
	return w.lines()
}

// waitLine waits until the watcher has printed want at or after line
// from, and returns its index.
func (w *watcher) waitLine(t *testing.T, from int, want string) int {
	t.Helper()
	at := -1
	testenv.WaitFor(t, fmt.Sprintf("%s to print %q (has %q, stderr %q)", w.name, want, w.lines(), w.err.String()), func() bool {
		l := w.lines()
		if from < len(l) {
			if i := slices.Index(l[from:], want); i >= 0 {
				at = from + i
				return true
			}
		}
		return false
	})
	return at
}

var fdLine = regexp.MustCompile(`^(\S+): async event FD (\d+)$`)

// checkFDLine: the first line names dev, and its number is the process's
// uverbs event fd (the number itself is each process's own).
func (w *watcher) checkFDLine(t *testing.T, dev string) {
	t.Helper()
	first := w.waitLines(t, 1)[0]
	m := fdLine.FindStringSubmatch(first)
	if m == nil || m[1] != dev {
		t.Fatalf("%s: first line %q, want %q and a number", w.name, first, dev+": async event FD N")
	}
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", w.cmd.Process.Pid, m[2]))
	if err != nil || link != "anon_inode:[infinibandevent]" {
		t.Fatalf("%s: fd %s is %q (%v), want the uverbs event file", w.name, m[2], link, err)
	}
}

func event(name string, typ int) string {
	return fmt.Sprintf("  event_type IBV_EVENT_%s (%d), port 1", name, typ)
}

// TestIntegrationEvents runs rdma-core's ibv_asyncwatch and ours side by
// side on an rxe device of the test's own, causes events (the netdev down
// and up, an address added and removed) and compares what they print;
// then removes the device. rxe cannot disassociate a context, so the
// kernel sends no event and fails no read: rdma-core's program waits on,
// holding the removal up, while ours notices, closes its context and
// exits 1.
func TestIntegrationEvents(t *testing.T) {
	testenv.RequireRDMA(t)
	const netdev = "rdmstaw0"
	compareEvents(t, nldev.LinkRXE, "rxe_aw0", netdev, []step{
		{[]string{"link", "set", netdev, "up"}, event("PORT_ACTIVE", 9)},
		{[]string{"addr", "add", "10.78.0.1/24", "dev", netdev}, event("GID_CHANGE", 18)},
		{[]string{"addr", "del", "10.78.0.1/24", "dev", netdev}, event("GID_CHANGE", 18)},
	})
}

// TestIntegrationSIWEvents is TestIntegrationEvents on a siw device of the
// test's own: siw turns its netdev's NETDEV_UP, NETDEV_DOWN and
// NETDEV_CHANGEADDR into PORT_ACTIVE, PORT_ERR and LID_CHANGE (siw_main.c's
// netdev notifier); an IP address changes no iWARP GID. siw, like rxe,
// cannot disassociate a context.
func TestIntegrationSIWEvents(t *testing.T) {
	testenv.SIW(t)
	const netdev = "rdmstaw1"
	compareEvents(t, nldev.LinkSIW, "siw_aw1", netdev, []step{
		{[]string{"link", "set", netdev, "up"}, event("PORT_ACTIVE", 9)},
		{[]string{"link", "set", netdev, "address", "02:00:00:00:aa:01"}, event("LID_CHANGE", 11)},
		{[]string{"link", "set", netdev, "address", "02:00:00:00:aa:02"}, event("LID_CHANGE", 11)},
	})
}

// step is one change to the netdev and the event line it must cause.
type step struct {
	args []string // ip's
	want string
}

// compareEvents adds a device of type typ on a dummy netdev, runs
// rdma-core's ibv_asyncwatch and ours on it, takes the netdev down (both
// must print PORT_ERR), makes the steps' changes, compares all that both
// printed, and removes the device.
func compareEvents(t *testing.T, typ nldev.LinkType, dev, netdev string, steps []step) {
	t.Helper()
	ip, rdma := testenv.Oracle(t, "ip"), testenv.Oracle(t, "rdma")
	testenv.Dummy(t, netdev)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	if err := nl.AddLink(dev, typ, netdev); err != nil {
		t.Fatal(err)
	}
	// Runs after the watchers are killed (cleanups are last-in first-out).
	t.Cleanup(func() {
		if d, err := nl.DeviceByName(dev); err == nil {
			nl.DeleteLink(d.Index)
		}
	})

	// Ours starts second: what it prints before the first event the test
	// causes must end what rdma-core's does.
	c := start(t, false, "-d", dev)
	c.checkFDLine(t, dev)
	o := start(t, true, "-d", dev)
	o.checkFDLine(t, dev)

	testenv.Run(t, ip, "link", "set", netdev, "down")
	portErr := event("PORT_ERR", 10)
	ci, oi := c.waitLine(t, 1, portErr), o.waitLine(t, 1, portErr)
	if ch, oh := c.lines()[1:ci], o.lines()[1:oi]; len(oh) > len(ch) || !slices.Equal(oh, ch[len(ch)-len(oh):]) {
		t.Fatalf("before the first event caused: ours printed %q, rdma-core %q", oh, ch)
	}
	cj, oj := ci+1, oi+1
	for _, s := range steps {
		testenv.Run(t, ip, s.args...)
		cj, oj = c.waitLine(t, cj, s.want)+1, o.waitLine(t, oj, s.want)+1
	}
	// Every event reaches both contexts, in the kernel's order.
	same := func() (string, bool) {
		d := cmp.Diff(c.lines()[ci:], o.lines()[oi:])
		return d, d == ""
	}
	testenv.WaitFor(t, "the same events in both", func() bool { _, ok := same(); return ok })

	// The removal waits for rdma-core's context, not for ours.
	deleted := make(chan error, 1)
	go func() { deleted <- exec.Command(rdma, "link", "delete", dev).Run() }()
	select {
	case <-o.done:
	case <-time.After(20 * time.Second):
		t.Fatal("ours did not exit 20 s after its device's removal began")
	}
	if st := o.state.Sys().(syscall.WaitStatus); !st.Exited() || st.ExitStatus() != 1 {
		t.Errorf("ours after the removal: %v, want exit status 1", o.state)
	}
	if want := "ibv_asyncwatch: " + dev + ": device removed\n"; o.err.String() != want {
		t.Errorf("ours' stderr after the removal: %q, want %q", o.err.String(), want)
	}
	switch {
	case c.running():
		// What rxe and siw do: nothing. The removal waits for its context.
		select {
		case err := <-deleted:
			t.Fatalf("the removal ended (%v) while rdma-core's program held a context", err)
		default:
		}
		c.cmd.Process.Kill()
		<-c.done
	default:
		// A driver that disassociates: DEVICE_FATAL, then a failed read.
		if l := c.lines(); l[len(l)-1] != "  event_type IBV_EVENT_DEVICE_FATAL (8), port 0" || c.state.ExitCode() != 1 {
			t.Fatalf("rdma-core's program ended (%v) after %q", c.state, l)
		}
	}
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatalf("rdma link delete %s: %v", dev, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the removal did not end 20 s after the last context closed")
	}
	if d, ok := same(); !ok {
		t.Errorf("events differ (-rdma-core +ours):\n%s", d)
	}
}

// TestIntegrationSignals: without -d both open the first device; SIGINT
// and SIGTERM kill ours as they kill rdma-core's.
func TestIntegrationSignals(t *testing.T) {
	testenv.RequireRDMA(t)
	compareSignals(t)
}

// TestIntegrationSIWSignals: the same where the first device is siw0.
func TestIntegrationSIWSignals(t *testing.T) {
	testenv.SIW(t)
	compareSignals(t)
}

func compareSignals(t *testing.T) {
	t.Helper()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		var firsts []string
		for _, ours := range []bool{false, true} {
			w := start(t, ours)
			m := fdLine.FindStringSubmatch(w.waitLines(t, 1)[0])
			if m == nil {
				t.Fatalf("%s: first line %q", w.name, w.lines()[0])
			}
			w.checkFDLine(t, m[1])
			firsts = append(firsts, m[1])
			w.cmd.Process.Signal(sig)
			select {
			case <-w.done:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s did not end after %v", w.name, sig)
			}
			if st := w.state.Sys().(syscall.WaitStatus); !st.Signaled() || st.Signal() != sig {
				t.Errorf("%s after %v: %v, want killed by the signal", w.name, sig, w.state)
			}
			if w.err.String() != "" {
				t.Errorf("%s after %v wrote %q on stderr", w.name, sig, w.err.String())
			}
		}
		if firsts[0] != firsts[1] {
			t.Errorf("first device: rdma-core's %s, ours %s", firsts[0], firsts[1])
		}
	}
}

// runBoth runs rdma-core's program and ours with args to their end and
// compares stdout, stderr and the exit status.
func runBoth(t *testing.T, wrap []string, args ...string) (stderr string) {
	t.Helper()
	type result struct {
		out, err string
		status   int
	}
	var res [2]result
	for i, ours := range []bool{false, true} {
		cmd := command(t, ours, args...)
		if !ours {
			cmd.Args[0] = "ibv_asyncwatch" // the name it prints is argv[0]
		}
		if len(wrap) > 0 {
			cmd.Args = append(append(slices.Clone(wrap), cmd.Path), cmd.Args[1:]...)
			cmd.Path = wrap[0]
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v %q did not end", wrap, args)
		}
		res[i] = result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
	}
	if res[0] != res[1] {
		t.Errorf("%v %q: rdma-core %+v, ours %+v", wrap, args, res[0], res[1])
	}
	return res[0].err
}

// TestIntegrationBadDevice: an unknown name, an empty one and one longer
// than any device name fail as rdma-core's program does.
func TestIntegrationBadDevice(t *testing.T) {
	testenv.RequireRDMA(t)
	for _, name := range []string{"nosuch", "", strings.Repeat("n", 300), "rxe0 "} {
		if got, want := runBoth(t, nil, "-d", name), "IB device "+name+" not found\n"; got != want {
			t.Errorf("-d %q: rdma-core's stderr %q, want %q", name, got, want)
		}
	}
	runBoth(t, nil, "--ib-dev", "nosuch", "-x")
	runBoth(t, nil, "--help")
}

// TestIntegrationNoDevice: in a network namespace that sees no device
// (exclusive mode), both fail with an empty name; measured on 6.1, where
// rdma-core's device list is empty rather than failed.
func TestIntegrationNoDevice(t *testing.T) {
	ip := rxetest.ExclusiveNetns(t, "rdmstawns")
	wrap := []string{ip, "netns", "exec", "rdmstawns"}
	if got, want := runBoth(t, wrap), "IB device  not found\n"; got != want {
		t.Errorf("no device: rdma-core's stderr %q, want %q", got, want)
	}
	runBoth(t, wrap, "-d", "rxe0")
}
