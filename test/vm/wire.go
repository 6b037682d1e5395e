package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Two guests on one wire: each has a NIC on a host UDP socket, the
// two sockets sending to each other (no root, no bridge, no tap on the
// host), and rxe0 on that eth0, so that RoCE v2 frames cross a real NIC,
// ARP and a second kernel (or siw0 instead, for the wire tests named SIW,
// whose iWARP runs over the two kernels' TCP). A wire test (TestWire*,
// internal/testkit/testenv.Wire) has two halves, one per guest, which meet over
// the wire itself.

const (
	// wireNet is the wire's /24: side a is .1, side b .2.
	wireNet = "10.88.0"
	// wireTestPrefix starts the name of every wire test: it runs in the
	// two guests of each pair, and nowhere else.
	wireTestPrefix = "TestWire"
	// wireBenchPrefix starts the name of every wire benchmark: like a
	// wire test, it runs in the two guests of each pair, and nowhere else.
	wireBenchPrefix = "BenchmarkWire"
)

// The environment of a wire guest's payload, read by internal/testkit/testenv.Wire.
const (
	envWireSide       = "RDMASTACK_WIRE_SIDE"        // 0 (side a) or 1 (side b)
	envWireSelf       = "RDMASTACK_WIRE_SELF"        // this guest's address on eth0
	envWirePeer       = "RDMASTACK_WIRE_PEER"        // the other guest's
	envWirePeerKernel = "RDMASTACK_WIRE_PEER_KERNEL" // the other guest's uname -r
)

// wireEnd is one guest's end of a wire.
type wireEnd struct {
	Side     int    // 0 (side a, 10.88.0.1) or 1 (side b, 10.88.0.2)
	Peer     kernel // the other guest's kernel
	Port     int    // host UDP port this end receives on
	PeerPort int    // host UDP port of the other end
	NIC      string // QEMU's device model of the NIC (-wire-nic)
	// SIW puts siw0 on eth0 instead of rxe0: in the pairs of the wire
	// tests named SIW (see splitWireSIW).
	SIW bool
}

func (w *wireEnd) host() int    { return w.Side + 1 }
func (w *wireEnd) side() string { return string(rune('a' + w.Side)) }
func (w *wireEnd) addr() string { return fmt.Sprintf("%s.%d", wireNet, w.host()) }
func (w *wireEnd) peer() string { return fmt.Sprintf("%s.%d", wireNet, 2-w.Side) }
func (w *wireEnd) mac() string  { return fmt.Sprintf("52:54:00:88:00:%02x", w.host()) }
func (w *wireEnd) order(k kernel) (a, b kernel) {
	if w.Side == 0 {
		return k, w.Peer
	}
	return w.Peer, k
}

// name is the run's name for the guest that boots k.
func (w *wireEnd) name(k kernel) string {
	a, b := w.order(k)
	n := fmt.Sprintf("wire %s <-> %s, side %s", a.Release, b.Release, w.side())
	if w.SIW {
		n += ", " + siwSuffix
	}
	return n
}

// id is the run's ID (its work and output directories).
func (w *wireEnd) id(k kernel) string {
	a, b := w.order(k)
	id := fmt.Sprintf("wire-%s-%s-%s", a.Release, b.Release, w.side())
	if w.SIW {
		id += "-" + siwSuffix
	}
	return id
}

// qemuArgs is the guest's NIC on a UDP socket of the host's loopback,
// sending to the peer's port.
func (w *wireEnd) qemuArgs() []string {
	return []string{
		"-netdev", fmt.Sprintf("socket,id=wire,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d", w.PeerPort, w.Port),
		"-device", w.NIC + ",netdev=wire,mac=" + w.mac(),
	}
}

// env is what a wire guest's payload exports besides payloadEnv's.
func (w *wireEnd) env() string {
	var b strings.Builder
	fmt.Fprintf(&b, "export %s=%d\n", envWireSide, w.Side)
	fmt.Fprintf(&b, "export %s=%s\n", envWireSelf, w.addr())
	fmt.Fprintf(&b, "export %s=%s\n", envWirePeer, w.peer())
	fmt.Fprintf(&b, "export %s=%s\n", envWirePeerKernel, shellQuote(w.Peer.Release))
	if w.SIW {
		fmt.Fprintf(&b, "export %s=%s\n", envWireSIWDev, siwDev)
	}
	return b.String()
}

// wirePairs are the kernel orders of the pairs, side a first: every two
// kernels of the session in both orders, then each of self with itself.
func wirePairs(kernels, self []kernel) [][2]kernel {
	var ps [][2]kernel
	for i, a := range kernels {
		for _, b := range kernels[i+1:] {
			ps = append(ps, [2]kernel{a, b}, [2]kernel{b, a})
		}
	}
	for _, k := range self {
		ps = append(ps, [2]kernel{k, k})
	}
	return ps
}

// freeUDPPorts returns n distinct UDP ports of the host's loopback that
// were free a moment ago.
func freeUDPPorts(n int) ([]int, error) {
	var ports []int
	var conns []net.PacketConn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("a UDP port for the wire: %v", err)
		}
		conns = append(conns, c)
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	return ports, nil
}

// splitRun splits a -test.run pattern at its first slash outside brackets
// and parentheses: the top-level tests' part, and the rest ("" if none).
func splitRun(pattern string) (top, rest string) {
	depth, class := 0, false
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '/' && depth == 0:
			return pattern[:i], pattern[i+1:]
		}
	}
	return pattern, ""
}

// runFlag returns the value of the last -test.run in test binary args.
func runFlag(args []string) (string, bool) { return testFlag(args, "test.run") }

// testFlag is the last value of the test binary flag name ("test.run")
// in args, and whether it is there.
func testFlag(args []string, flag string) (string, bool) {
	v, ok := "", false
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || name != flag {
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				break
			}
			i++
			val = args[i]
		}
		v, ok = val, true
	}
	return v, ok
}

// withoutFlags is args without any of the test binary flags names
// ("test.run"), each of which takes a value.
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "-") && slices.Contains(names, name) {
			if !hasVal {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// singleSkip is what a single guest skips: wire tests and benchmarks (no
// peer there) and siw ones (no siw device there).
const singleSkip = "^(" + wireTestPrefix + "|" + wireBenchPrefix + ")|" + siwTestMark

// singleArgs are the test binary flags of a single-guest run: args with
// singleSkip joined to their -test.skip, if any (checkSkip makes sure it
// has no subtest part, which a join could not keep).
func singleArgs(args []string) []string {
	skip := singleSkip
	if user, ok := testFlag(args, "test.skip"); ok && user != "" {
		skip = "(" + singleSkip + ")|(" + user + ")"
	}
	return append(withoutFlags(args, "test.skip"), "-test.skip", skip)
}

// checkSkip refuses a -test.skip with subtest parts ("A/B"): the testing
// package takes one -test.skip, whose parts match the name's levels, so
// test/vm could not join its own top-level skip of singleArgs to it.
func checkSkip(args []string) error {
	if v, ok := testFlag(args, "test.skip"); ok {
		if _, rest := splitRun(v); rest != "" {
			return fmt.Errorf("-test.skip %q has a subtest part: test/vm joins its own skip of the wire and siw tests to a -test.skip, which works for top-level patterns only", v)
		}
	}
	return nil
}

// pairArgs are the test binary flags of a wire guest for a binary whose
// wire tests and benchmarks to run are tests and benches: args' -test.run
// and -test.bench (whose subtest parts are kept) become ones that match
// exactly those (-test.run '^$' when there is no test, no -test.bench
// when there is no benchmark).
//
// The two halves of a wire benchmark must agree on b.N, since they meet
// at each iteration's rendezvous: a -test.benchtime of a duration lets
// each half grow b.N from its own timings, so a pair runs its benchmarks
// with a count (-test.benchtime Nx, given or 1x), which both halves run
// alike (the testing package's b.N=1 probe, then N).
func pairArgs(args []string, tests, benches []string) []string {
	out := onlyArgs(withoutFlags(args, "test.benchtime"), tests, benches)
	if len(benches) > 0 {
		out = append(out, "-test.benchtime", countBenchtime(args))
	}
	return out
}

// onlyArgs is args with a -test.run and -test.bench that match exactly
// tests and benches (their subtest parts kept; -test.run '^$' when there
// is no test, no -test.bench when there is no benchmark).
func onlyArgs(args []string, tests, benches []string) []string {
	only := func(names []string, pattern string, given bool) string {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = regexp.QuoteMeta(n)
		}
		p := "^(" + strings.Join(quoted, "|") + ")$"
		if given {
			if _, rest := splitRun(pattern); rest != "" {
				p += "/" + rest
			}
		}
		return p
	}
	out := withoutFlags(args, "test.run", "test.bench")
	run := "^$"
	if len(tests) > 0 {
		r, ok := runFlag(args)
		run = only(tests, r, ok)
	}
	out = append(out, "-test.run", run)
	if len(benches) > 0 {
		b, ok := testFlag(args, "test.bench")
		out = append(out, "-test.bench", only(benches, b, ok))
	}
	return out
}

// countBenchtime is args' -test.benchtime if it is a count (Nx), else 1x.
func countBenchtime(args []string) string {
	if v, ok := testFlag(args, "test.benchtime"); ok {
		if n, isCount := strings.CutSuffix(v, "x"); isCount {
			if i, err := strconv.Atoi(n); err == nil && i > 0 {
				return v
			}
		}
	}
	return "1x"
}

// testList is what the selection of a test run holds: per binary name, its
// wire tests and wire benchmarks, its siw tests and benchmarks, and whether
// any other test or benchmark is selected.
type testList struct {
	wire       map[string][]string // TestWire*
	bench      map[string][]string // BenchmarkWire*
	siw        map[string][]string // tests and examples with SIW in their names, but wire ones
	siwBench   map[string][]string // benchmarks likewise
	other      bool                // a test or example for the single guests
	otherBench bool                // a benchmark for the single guests
}

// wireBinaries are the names of the binaries with wire tests or
// benchmarks, sorted.
func (l testList) wireBinaries() []string { return binaryNames(l.wire, l.bench) }

// siwBinaries are the names of the binaries with siw tests or benchmarks,
// sorted.
func (l testList) siwBinaries() []string { return binaryNames(l.siw, l.siwBench) }

// binaryNames are the keys of the maps, sorted, each once.
func binaryNames(maps ...map[string][]string) []string {
	var bins []string
	for _, m := range maps {
		for b := range m {
			if !slices.Contains(bins, b) {
				bins = append(bins, b)
			}
		}
	}
	slices.Sort(bins)
	return bins
}

// listTests runs each test binary on the host with -test.list for the
// top-level part of args' -test.run (all tests without one), and of its
// -test.bench if there is one, which lists the selected tests and
// benchmarks without running them.
func listTests(ctx context.Context, bins []testBinary, args []string) (testList, error) {
	pattern := "."
	if r, ok := runFlag(args); ok {
		pattern, _ = splitRun(r)
	}
	bench, benchGiven := testFlag(args, "test.bench")
	bench, _ = splitRun(bench)
	l := testList{wire: map[string][]string{}, bench: map[string][]string{},
		siw: map[string][]string{}, siwBench: map[string][]string{}}
	for _, b := range bins {
		names, err := listNames(ctx, b, pattern)
		if err != nil {
			return testList{}, err
		}
		for _, name := range names {
			switch {
			case strings.HasPrefix(name, wireTestPrefix):
				l.wire[b.Name] = append(l.wire[b.Name], name)
			case !strings.HasPrefix(name, "Test") && !strings.HasPrefix(name, "Example"):
			case isSIWTest(name):
				l.siw[b.Name] = append(l.siw[b.Name], name)
			default:
				l.other = true
			}
		}
		if !benchGiven {
			continue
		}
		if names, err = listNames(ctx, b, bench); err != nil {
			return testList{}, err
		}
		for _, name := range names {
			switch {
			case strings.HasPrefix(name, wireBenchPrefix):
				l.bench[b.Name] = append(l.bench[b.Name], name)
			case !strings.HasPrefix(name, "Benchmark"):
			case isSIWTest(name):
				l.siwBench[b.Name] = append(l.siwBench[b.Name], name)
			default:
				l.otherBench = true
			}
		}
	}
	return l, nil
}

// listNames is what b -test.list pattern lists: the top-level tests,
// benchmarks, fuzz tests and examples whose names match.
func listNames(ctx context.Context, b testBinary, pattern string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, b.HostPath, "-test.list", pattern)
	cmd.Dir = b.SourceDir
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -test.list %q: %v: %s", b.HostPath, pattern, err, strings.TrimSpace(errOut.String()))
	}
	return strings.Fields(out.String()), nil
}

// pairPayload is the test payload of a wire guest: the binaries with wire
// tests or benchmarks, each with only those.
func pairPayload(k kernel, outDir string, w *wireEnd, bins []testBinary, list testList, args []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# test/vm wire payload\n")
	b.WriteString(payloadEnv(k, 1, outDir))
	b.WriteString(w.env())
	b.WriteString("status=0\n")
	for _, t := range bins {
		if tests, benches := list.wire[t.Name], list.bench[t.Name]; len(tests)+len(benches) > 0 {
			b.WriteString(testSteps([]testBinary{t}, pairArgs(args, tests, benches)))
		}
	}
	b.WriteString("exit $status\n")
	return b.String()
}

// checkPair fails a wire run that did not report a result for each of the
// wire tests and benchmarks it was given: they must run on both sides of
// each pair.
func checkPair(rep *runReport, list testList) {
	if rep.Err != nil {
		return // counted as a failure already
	}
	for _, b := range list.wireBinaries() {
		for _, name := range slices.Concat(list.wire[b], list.bench[b]) {
			if _, ok := rep.Tally.Results[b+": "+name]; !ok {
				rep.Tally.Failed++
				rep.Tally.Problems = append(rep.Tally.Problems,
					fmt.Sprintf("%s: %s: no result on this side (a wire test runs on both sides of each pair)", b, name))
			}
		}
	}
}

// pairGrace is how long a guest of a pair may run on after its peer ended
// well: more than one rendezvous's timeout (testenv.WireTimeout).
const pairGrace = 3 * time.Minute

// pairJob is one pair of a wire run: its two kernels, side a's first,
// and the wire tests it runs, the siw ones or the others (see
// splitWireSIW), which also say whether its guests get siw0 instead of
// rxe0.
type pairJob struct {
	kernels [2]kernel
	list    testList
}

// runPairs boots the pairs, wireParallel of them at a time in the order
// given and the two guests of a pair at once, and returns one report per
// guest, pair by pair, side a first; each pair's output is printed, in
// order, once all have ended. A pair in which a guest's kernel crashed
// boots once more, and its reports say so: 6.12's rxe corrupts its own
// slab now and then on the wire (see docs/testing.md), a kernel bug that
// would otherwise fail the run by chance. A second crash, and every other
// failure, stands.
func (s *session) runPairs(ctx context.Context, jobs []pairJob,
	payload func(k kernel, w *wireEnd, list testList, guestOutDir string) string) ([]runReport, error) {
	files, err := s.prepare(ctx)
	if err != nil {
		return nil, err
	}
	lists := make([]testList, len(jobs))
	for i, j := range jobs {
		lists[i] = j.list
	}
	results := make([]pairResult, len(jobs))
	if err := bounded(ctx, len(jobs), s.wireParallel(lists...), func(i int) {
		j := jobs[i]
		results[i] = s.runPairRetrying(ctx, files, j.kernels, func(k kernel, w *wireEnd, outDir string) string {
			return payload(k, w, j.list, outDir)
		}, j.list.wireSIW())
	}); err != nil {
		return nil, err
	}
	var reports []runReport
	for i, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		s.stdout.Write(r.out.Bytes())
		for k := range r.reps {
			checkPair(&r.reps[k], jobs[i].list)
		}
		reports = append(reports, r.reps[:]...)
	}
	return reports, nil
}

// pairResult is how one pair ran: its reports, and its guests' output
// to print, in order, once every pair has ended.
type pairResult struct {
	reps [2]runReport
	out  bytes.Buffer
	err  error
}

// runPairRetrying runs pair p, and boots it once more if a guest's
// kernel crashed (the first boot's output is kept, and the reports say
// so).
func (s *session) runPairRetrying(ctx context.Context, files map[string]bootFiles, p [2]kernel,
	payload func(k kernel, w *wireEnd, guestOutDir string) string, siw bool) (r pairResult) {
	reps, outs, err := s.runPair(ctx, files, p, payload, siw)
	if err != nil {
		r.err = err
		return r
	}
	var crashed []string
	for i := range reps {
		if reps[i].Result.Crash != "" {
			crashed = append(crashed, fmt.Sprintf("%s (%s)", reps[i].Name, crashSummary(reps[i])))
		}
	}
	if len(crashed) > 0 {
		for i := range reps {
			writeOutput(&r.out, reps[i].Name+" (first boot)", outs[i])
		}
		msg := fmt.Sprintf("vm: the kernel of %s crashed: booting the pair once more\n", strings.Join(crashed, " and "))
		io.WriteString(&r.out, msg)
		io.WriteString(s.stderr, msg)
		if reps, outs, err = s.runPair(ctx, files, p, payload, siw); err != nil {
			r.err = err
			return r
		}
	}
	for i := range reps {
		writeOutput(&r.out, reps[i].Name, outs[i])
		if len(crashed) > 0 {
			reps[i].Note = "booted twice: the kernel of " + strings.Join(crashed, " and ") + " crashed the first time"
		}
	}
	r.reps = reps
	return r
}

// wireParallel is how many pairs run at once: -wire-parallel, or by
// default 2 for tests, whose guests spend most of a pair's time waiting
// (for timeouts, netem's delays, a peer's restart), and 1 for
// benchmarks, which a second pair on the same cores would skew.
func (s *session) wireParallel(lists ...testList) int {
	if s.opts.wireParallel > 0 {
		return s.opts.wireParallel
	}
	for _, l := range lists {
		if len(l.bench) > 0 {
			return 1
		}
	}
	return 2
}

// runPair boots the two guests of pair p at once and returns their
// reports and outputs, side a first. A guest that fails stops its peer,
// whose wire tests could only wait for it, and one that ends gives its
// peer pairGrace to end too. siw gives the guests siw0 instead of rxe0
// (wireEnd.SIW).
func (s *session) runPair(ctx context.Context, files map[string]bootFiles, p [2]kernel,
	payload func(k kernel, w *wireEnd, guestOutDir string) string, siw bool) ([2]runReport, [2]*bytes.Buffer, error) {
	var (
		wg      sync.WaitGroup
		reps    [2]runReport
		outs    = [2]*bytes.Buffer{new(bytes.Buffer), new(bytes.Buffer)}
		mu      sync.Mutex
		why     [2]string // why a guest was stopped
		ctxs    [2]context.Context
		cancels [2]context.CancelFunc
	)
	ports, err := freeUDPPorts(2)
	if err != nil {
		return reps, outs, err
	}
	ends := [2]*wireEnd{
		{Side: 0, Peer: p[1], Port: ports[0], PeerPort: ports[1], NIC: s.opts.wireNIC, SIW: siw},
		{Side: 1, Peer: p[0], Port: ports[1], PeerPort: ports[0], NIC: s.opts.wireNIC, SIW: siw},
	}
	stop := func(i int, reason string) {
		mu.Lock()
		if why[i] == "" {
			why[i] = reason
		}
		mu.Unlock()
		cancels[i]()
	}
	for i := range ends {
		ctxs[i], cancels[i] = context.WithCancel(ctx)
	}
	for i, w := range ends {
		k := p[i]
		j := vmJob{kernel: k, devices: 1, wire: w, payload: func(k kernel, _ int, outDir string) string {
			return payload(k, w, outDir)
		}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], _ = s.boot(ctxs[i], j, files[k.Release], outs[i], func(r *runReport) func(string) { return r.Tally.line })
			if reps[i].Err == nil {
				// The peer's wire tests wait for this side at
				// most WireTimeout each; more is a hang.
				t := time.AfterFunc(pairGrace, func() {
					stop(1-i, fmt.Sprintf("still running %v after its peer ended", pairGrace))
				})
				context.AfterFunc(ctxs[1-i], func() { t.Stop() })
			} else if !errors.Is(reps[i].Err, context.Canceled) {
				stop(1-i, "its peer failed")
			}
		}()
	}
	wg.Wait()
	for i := range cancels {
		cancels[i]()
	}
	if ctx.Err() != nil {
		return reps, outs, fmt.Errorf("interrupted: %v", ctx.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range reps {
		if errors.Is(reps[i].Err, context.Canceled) {
			reps[i].Err = errors.New("stopped: " + why[i])
		}
	}
	return reps, outs, nil
}
