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
			_, warnings, err := resolveModules(ctx, t.modprobe, k.Release)
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintf(stdout, "vm: warning: %s\n", w)
			}
			fmt.Fprintf(stdout, "vm: kernel %s: %s, guest modules found\n", k.Release, k.Image)
		}
		return nil
	}

	m, err := findModule(ctx)
	if err != nil {
		return err
	}
	work, cleanup, err := workDir(o, stderr)
	if err != nil {
		return err
	}
	defer cleanup()

	s := &session{opts: o, tools: t, module: m, work: work, kernels: kernels, stdout: stdout, stderr: stderr}
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
	module  module
	work    string
	kernels []kernel
	stdout  io.Writer
	stderr  io.Writer
}

// run is run mode: the command in every VM of the matrix.
func (s *session) run(ctx context.Context) error {
	if _, err := buildCommands(ctx, s.module, filepath.Join(s.work, "bin"), s.stderr); err != nil {
		return err
	}
	reports, err := s.matrix(ctx, s.opts.devices, func(k kernel, n int, outDir string) string {
		return runPayload(k, n, outDir, s.module.Root, s.opts.args)
	}, nil)
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
		fmt.Fprintln(s.stderr, "vm: CGO_ENABLED=0 go vet ./...")
		if err := goRun(ctx, s.module.Root, s.stdout, s.stdout, "vet", "./..."); err != nil {
			return fmt.Errorf("go vet failed: %v", err)
		}
		fmt.Fprintln(s.stderr, "vm: CGO_ENABLED=0 go test ./...")
		if err := goRun(ctx, s.module.Root, s.stdout, s.stdout, "test", "./..."); err != nil {
			return fmt.Errorf("unit tests on the host failed: %v", err)
		}
		if err := raceTests(ctx, s.module.Root, s.stdout, s.stderr); err != nil {
			return err
		}
		fmt.Fprintf(s.stderr, "vm: host unit tests passed in %s\n", seconds(time.Since(start)))
	}
	start := time.Now()
	pkgs, err := listTestPackages(ctx, s.module)
	if err != nil {
		return err
	}
	bins, err := buildTestBinaries(ctx, s.module, pkgs, filepath.Join(s.work, "tests"), s.stderr)
	if err != nil {
		return err
	}
	if len(bins) == 0 {
		return errors.New("no test binaries to run: the module has no package with tests")
	}
	if _, err := buildCommands(ctx, s.module, filepath.Join(s.work, "bin"), s.stderr); err != nil {
		return err
	}
	fmt.Fprintf(s.stderr, "vm: built %d test binaries in %s\n", len(bins), seconds(time.Since(start)))

	reports, err := s.matrix(ctx, s.opts.devices, func(k kernel, n int, outDir string) string {
		return testPayload(k, n, outDir, bins, s.opts.args)
	}, func(r *runReport) func(string) { return r.Tally.line })
	if err != nil {
		return err
	}
	if n, regex, ok, _ := parseScale(s.opts.scale); ok {
		args := append(append([]string(nil), s.opts.args...), "-test.run", regex)
		more, err := s.matrix(ctx, []int{n}, func(k kernel, n int, outDir string) string {
			return testPayload(k, n, outDir, bins, args)
		}, func(r *runReport) func(string) { return r.Tally.line })
		if err != nil {
			return err
		}
		reports = append(reports, more...)
	}
	printRunSummary(s.stdout, reports, true)
	passed, failed := 0, 0
	for _, r := range reports {
		passed += r.Tally.Passed
		failed += r.Tally.bad()
		if r.Err != nil {
			failed++
		}
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

// matrix boots one VM per kernel and device count, in order, with the
// payload that payload returns; watch, if set, gives the line parser of a
// run. A failing run does not stop the others; only errors that concern
// all runs (building an initramfs, an interrupt) are returned.
func (s *session) matrix(ctx context.Context, counts []int,
	payload func(k kernel, devices int, guestOutDir string) string,
	watch func(*runReport) func(string)) ([]runReport, error) {
	var reports []runReport
	for _, k := range s.kernels {
		start := time.Now()
		initrd, warnings, err := buildInitramfs(ctx, s.tools, k, filepath.Join(s.work, "initramfs"))
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			fmt.Fprintf(s.stderr, "vm: warning: %s\n", w)
		}
		image, why := bootImage(ctx, k, filepath.Join(s.work, "kernels"))
		if why != "" {
			fmt.Fprintf(s.stderr, "vm: kernel %s: booting the bzImage: %s\n", k.Release, why)
		}
		fmt.Fprintf(s.stderr, "vm: kernel and initramfs for %s ready in %s\n", k.Release, seconds(time.Since(start)))
		for _, n := range counts {
			id := fmt.Sprintf("%s-%d", k.Release, n)
			hostOut := filepath.Join(s.work, "out", id)
			runDir := filepath.Join(s.work, "run", id)
			for _, d := range []string{hostOut, runDir} {
				if err := os.MkdirAll(d, 0o777); err != nil {
					return nil, err
				}
			}
			guestOut := guestWork + "/out/" + id
			if err := os.WriteFile(filepath.Join(runDir, "payload.sh"), []byte(payload(k, n, guestOut)), 0o755); err != nil {
				return nil, err
			}
			vm := &vmRun{
				Kernel: k, Devices: n, Image: image, Initrd: initrd, Work: s.work, ID: id, Src: s.module.Root,
				Mem: s.opts.mem, SMP: s.opts.smp, Timeout: s.opts.timeout,
				Verbose: s.opts.verbose, Out: s.stdout,
			}
			rep := runReport{Name: vm.name()}
			var parse func(string)
			if watch != nil {
				parse = watch(&rep)
			}
			vm.Payload = parse
			fmt.Fprintf(s.stderr, "vm: booting %s\n", vm.name())
			res, err := vm.boot(ctx, s.tools.qemu)
			rep.Result, rep.Err = res, err
			if err != nil {
				fmt.Fprintf(s.stderr, "vm: %s: %v\n", vm.name(), err)
			} else {
				fmt.Fprintf(s.stderr, "vm: %s: exit status %d (boot %s, total %s)\n",
					vm.name(), res.Status, seconds(res.Boot), seconds(res.Total))
			}
			reports = append(reports, rep)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted: %v", ctx.Err())
			}
		}
	}
	if s.opts.keep || s.opts.work != "" {
		fmt.Fprintf(s.stderr, "vm: guest output files are under %s\n", filepath.Join(s.work, "out"))
	}
	return reports, nil
}
