package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	bootDir    = "/boot"
	modulesDir = "/lib/modules"
)

// run is the whole command; main only reports its error.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	t, err := ensurePrereqs(ctx, o, stderr)
	if err != nil {
		return err
	}
	installed, err := findKernels(bootDir, modulesDir)
	if err != nil {
		return err
	}
	kernels, err := selectKernels(o.kernels, installed)
	if err != nil {
		return err
	}
	for _, k := range kernels {
		if err := checkKernelFiles(k, modulesDir); err != nil {
			return err
		}
	}
	if o.mode == "setup" {
		fmt.Fprintf(stdout, "vm: Debian packages installed: %s\n", strings.Join(debPackages, " "))
		fmt.Fprintf(stdout, "vm: qemu: %s\n", t.qemu)
		fmt.Fprintf(stdout, "vm: busybox: %s (static)\n", t.busybox)
		fmt.Fprintf(stdout, "vm: kernels with rdma_rxe: %s\n", kernelsDescription(installed))
		for _, k := range kernels {
			siw, err := ensureSIW(ctx, k, o.install, stderr)
			if err != nil {
				return err
			}
			_, warnings, err := resolveModules(ctx, t.modprobe, k.Release, siw)
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintf(stdout, "vm: warning: %s\n", w)
			}
			fmt.Fprintf(stdout, "vm: kernel %s: %s, guest modules found, siw: %s\n", k.Release, k.Image, siw)
		}
		return nil
	}

	mods, err := findModules(ctx)
	if err != nil {
		return err
	}
	work, cleanup, err := workDir(o, stderr)
	if err != nil {
		return err
	}
	defer cleanup()

	s := &session{opts: o, tools: t, module: mods[0], nested: mods[1:], work: work, kernels: kernels, stdout: stdout, stderr: stderr}
	if o.mode == "run" {
		return s.run(ctx)
	}
	return s.test(ctx)
}

// workDir returns the work directory and a function that removes it if it
// is a temporary one and -keep is off.
func workDir(o *options, log io.Writer) (string, func(), error) {
	if o.work != "" {
		dir, err := filepath.Abs(o.work)
		if err != nil {
			return "", nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		return dir, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "rdmastack-vm-")
	if err != nil {
		return "", nil, err
	}
	if o.keep {
		return dir, func() { fmt.Fprintf(log, "vm: work directory kept: %s\n", dir) }, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// session is one run or test invocation over the kernel × device matrix.
type session struct {
	opts    *options
	tools   *tools
	module  module   // the repository's module: run's commands start in its root
	nested  []module // modules nested in it, built and tested with it
	work    string
	kernels []kernel
	stdout  io.Writer
	stderr  io.Writer
}

// modules is the repository's module, then the nested ones.
func (s *session) modules() []module { return append([]module{s.module}, s.nested...) }

// buildAllCommands builds the commands of every module into WORK/bin.
func (s *session) buildAllCommands(ctx context.Context) error {
	for _, m := range s.modules() {
		if _, err := buildCommands(ctx, m, filepath.Join(s.work, "bin"), s.stderr); err != nil {
			return err
		}
	}
	return nil
}

// unitTests runs go vet, go test and go test -race in every module.
func (s *session) unitTests(ctx context.Context) error {
	for _, m := range s.modules() {
		fmt.Fprintf(s.stderr, "vm: %s: CGO_ENABLED=0 go vet ./...\n", m.Path)
		if err := goRun(ctx, m.Root, s.stdout, s.stdout, "vet", "./..."); err != nil {
			return fmt.Errorf("go vet failed: %v", err)
		}
		fmt.Fprintf(s.stderr, "vm: %s: CGO_ENABLED=0 go test ./...\n", m.Path)
		if err := goRun(ctx, m.Root, s.stdout, s.stdout, "test", "./..."); err != nil {
			return fmt.Errorf("unit tests on the host failed: %v", err)
		}
		if err := raceTests(ctx, m.Root, s.stdout, s.stderr); err != nil {
			return err
		}
	}
	return nil
}

// buildAllTests builds the test binaries of every module into dir (race
// ones, with the race detector, of the packages whose tests need the VM).
func (s *session) buildAllTests(ctx context.Context, dir string, race bool) ([]testBinary, error) {
	var all []testBinary
	for _, m := range s.modules() {
		pkgs, err := listTestPackages(ctx, m)
		if err != nil {
			return nil, err
		}
		build := buildTestBinaries
		if race {
			build = buildRaceTestBinaries
		}
		bins, err := build(ctx, m, pkgs, dir, s.stderr)
		if err != nil {
			return nil, err
		}
		all = append(all, bins...)
	}
	return all, nil
}

// run is run mode: the command in every VM of the matrix.
func (s *session) run(ctx context.Context) error {
	if err := s.buildAllCommands(ctx); err != nil {
		return err
	}
	reports, err := s.runJobs(ctx, s.jobs(s.opts.devices, "", func(k kernel, n int, outDir string) string {
		return runPayload(k, n, outDir, s.module.Root, s.opts.args)
	}), nil)
	if err != nil {
		return err
	}
	printRunSummary(s.stdout, reports, false)
	failed := 0
	for _, r := range reports {
		if r.Err != nil || r.Result.Status != 0 {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d runs failed", failed, len(reports))
	}
	return nil
}

// test is test mode: go test on the host, then the test binaries in every
// VM of the matrix.
func (s *session) test(ctx context.Context) error {
	if s.opts.unit {
		start := time.Now()
		if err := s.unitTests(ctx); err != nil {
			return err
		}
		fmt.Fprintf(s.stderr, "vm: host unit tests passed in %s\n", seconds(time.Since(start)))
	}
	if err := checkSkip(s.opts.args); err != nil {
		return err
	}
	start := time.Now()
	bins, err := s.buildAllTests(ctx, filepath.Join(s.work, "tests"), false)
	if err != nil {
		return err
	}
	if len(bins) == 0 {
		return errors.New("no test binaries to run: the module has no package with tests")
	}
	if err := s.buildAllCommands(ctx); err != nil {
		return err
	}
	fmt.Fprintf(s.stderr, "vm: built %d test binaries in %s\n", len(bins), seconds(time.Since(start)))
	raceKernels, err := selectSessionKernels("race", s.opts.race, s.kernels)
	if err != nil {
		return err
	}
	selfKernels, err := selectSessionKernels("wire-self", s.opts.wireSelf, s.kernels)
	if err != nil {
		return err
	}
	var raceBins []testBinary
	if len(raceKernels) > 0 {
		start := time.Now()
		raceBins, err = s.buildAllTests(ctx, filepath.Join(s.work, "tests-race"), true)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.stderr, "vm: built %d race test binaries in %s\n", len(raceBins), seconds(time.Since(start)))
	}

	list, err := listTests(ctx, bins, s.opts.args)
	if err != nil {
		return err
	}
	// A -test.run that selects wire or siw tests only makes no single-guest runs,
	// unless -test.bench selects benchmarks other than wire ones: those
	// run in single guests whatever -test.run selects.
	_, runGiven := runFlag(s.opts.args)
	single := list.other || !runGiven || list.otherBench
	var jobs []vmJob
	if single {
		jobs = s.jobs(s.opts.devices, "", func(k kernel, n int, outDir string) string {
			return testPayload(k, n, outDir, binsForCount(bins, s.module.Path, n == s.opts.devices[0]), singleArgs(s.opts.args))
		})
	}
	if n, regex, ok, _ := parseScale(s.opts.scale); ok {
		args := singleArgs(append(append([]string(nil), s.opts.args...), "-test.run", regex))
		jobs = append(jobs, s.jobs([]int{n}, "", func(k kernel, n int, outDir string) string {
			return testPayload(k, n, outDir, bins, args)
		})...)
	}
	if len(raceBins) > 0 && single {
		// The race runs are the longest: first, so that the parallel
		// guests finish together.
		var race []vmJob
		for _, k := range raceKernels {
			race = append(race, vmJob{kernel: k, devices: s.opts.devices[0], suffix: raceSuffix,
				payload: func(k kernel, n int, outDir string) string {
					return testPayload(k, n, outDir, raceBins, singleArgs(s.opts.args))
				}})
		}
		jobs = append(race, jobs...)
	}
	// The race runs are the longest: first, so that the parallel guests
	// finish together.
	siwRace, siw := s.siwJobs(bins, raceBins, raceKernels, list)
	jobs = append(append(siwRace, jobs...), siw...)
	var reports []runReport
	if len(jobs) > 0 {
		reports, err = s.runJobs(ctx, jobs, func(r *runReport) func(string) { return r.Tally.line })
		if err != nil {
			return err
		}
	}
	// The pairs come last: their two guests take two CPUs at once.
	if s.opts.wire {
		pairs := wireJobs(list, s.kernels, selfKernels)
		if len(pairs) > 0 {
			start := time.Now()
			reps, err := s.runPairs(ctx, pairs, func(k kernel, w *wireEnd, list testList, outDir string) string {
				return pairPayload(k, outDir, w, bins, list, s.opts.args)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.stderr, "vm: %d wire pairs ran in %s\n", len(pairs), seconds(time.Since(start)))
			reports = append(reports, reps...)
		}
	}
	if len(reports) == 0 {
		return errors.New("no VM run: -test.run selects wire tests only, and -wire=false")
	}
	printRunSummary(s.stdout, reports, true)
	passed, failed, races := 0, 0, 0
	for _, r := range reports {
		races += r.Tally.Races
		passed += r.Tally.Passed
		failed += r.Tally.bad()
		if r.Err != nil {
			failed++
		}
	}
	if len(raceBins) > 0 {
		fmt.Fprintf(s.stdout, "vm: race detector: %d reports in %d race runs\n", races, len(raceKernels))
	}
	// The last line of the output is "vm: X passed, Y failed": on stdout, or
	// as the error main prints.
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if failed > 0 {
		return errors.New(summary)
	}
	fmt.Fprintln(s.stdout, "vm: "+summary)
	return nil
}

// wireJobs are the wire pairs of a test run, in the order they start.
// The siw wire tests run in pairs of their own, which have siw0 instead
// of rxe0 (see splitWireSIW), in one pool with the others: the rxe pairs,
// the longest, first. The rxe pairs are every two kernels in both orders
// and those of self each with itself; the siw pairs the same without
// self when there are two kernels or more, to keep CI within its budget
// (-wire-self is for rxe, whose two ends on one kernel once failed alone).
func wireJobs(list testList, kernels, self []kernel) []pairJob {
	var jobs []pairJob
	for i, l := range list.splitWireSIW() {
		if len(l.wireBinaries()) == 0 {
			continue
		}
		self := self
		if i == 1 && len(kernels) > 1 {
			self = nil
		}
		for _, p := range wirePairs(kernels, self) {
			jobs = append(jobs, pairJob{kernels: p, list: l})
		}
	}
	return jobs
}
