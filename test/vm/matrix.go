package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// vmJob is one guest boot of a session: a kernel, a device count and the
// payload to run.
type vmJob struct {
	kernel  kernel
	devices int
	// suffix tells apart runs of one kernel and device count ("race");
	// it is part of the run's ID and name.
	suffix  string
	wire    *wireEnd // a guest of a pair: devices is 1
	payload func(k kernel, devices int, guestOutDir string) string
}

func (j vmJob) id() string {
	if j.wire != nil {
		return j.wire.id(j.kernel)
	}
	id := fmt.Sprintf("%s-%d", j.kernel.Release, j.devices)
	if j.suffix != "" {
		id += "-" + j.suffix
	}
	return id
}

// raceSuffix marks the race runs; raceSlowdown is how much longer they
// may take than -timeout (the race detector slows the tests 2-10 times).
const (
	raceSuffix   = "race"
	raceSlowdown = 3
)

// jobs is one vmJob per kernel and device count, kernels outermost.
func (s *session) jobs(counts []int, suffix string,
	payload func(k kernel, devices int, guestOutDir string) string) []vmJob {
	var js []vmJob
	for _, k := range s.kernels {
		for _, n := range counts {
			js = append(js, vmJob{kernel: k, devices: n, suffix: suffix, payload: payload})
		}
	}
	return js
}

// bootFiles are a kernel's image and initramfs.
type bootFiles struct{ image, initrd string }

// prepare builds (or finds cached) the boot files of every kernel.
func (s *session) prepare(ctx context.Context) (map[string]bootFiles, error) {
	files := make(map[string]bootFiles)
	for _, k := range s.kernels {
		start := time.Now()
		siw, err := ensureSIW(ctx, k, s.opts.install, s.stderr)
		if err != nil {
			return nil, err
		}
		initrd, warnings, err := buildInitramfs(ctx, s.tools, k, filepath.Join(s.work, "initramfs"), siw)
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
		files[k.Release] = bootFiles{image, initrd}
	}
	return files, nil
}

// runJobs boots the jobs' guests, up to -parallel at once, and returns
// their reports in the jobs' order; watch, if set, gives the line parser
// of a run. A guest's output is streamed when one runs at a time, else
// printed as one block when its run ends, so that runs never interleave.
// A failing run does not stop the others; only errors that concern all
// runs (building an initramfs, an interrupt) are returned.
func (s *session) runJobs(ctx context.Context, jobs []vmJob, watch func(*runReport) func(string)) ([]runReport, error) {
	files, err := s.prepare(ctx)
	if err != nil {
		return nil, err
	}
	parallel := max(1, min(s.opts.parallel, len(jobs)))
	reports := make([]runReport, len(jobs))
	errs := make([]error, len(jobs))
	var outMu sync.Mutex // one block of output at a time
	err = bounded(ctx, len(jobs), parallel, func(i int) {
		j := jobs[i]
		var out io.Writer = s.stdout
		var buf *bytes.Buffer
		if parallel > 1 {
			buf = new(bytes.Buffer)
			out = buf
		}
		reports[i], errs[i] = s.bootRetrying(ctx, j, files[j.kernel.Release], out, watch)
		if buf != nil {
			outMu.Lock()
			writeOutput(s.stdout, reports[i].Name, buf)
			outMu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if s.opts.keep || s.opts.work != "" {
		fmt.Fprintf(s.stderr, "vm: guest output files are under %s\n", filepath.Join(s.work, "out"))
	}
	return reports, nil
}

// boot runs one job's guest, its payload's output going to out.
func (s *session) boot(ctx context.Context, j vmJob, f bootFiles, out io.Writer,
	watch func(*runReport) func(string)) (runReport, error) {
	id := j.id()
	hostOut := filepath.Join(s.work, "out", id)
	runDir := filepath.Join(s.work, "run", id)
	for _, d := range []string{hostOut, runDir} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			return runReport{}, err
		}
	}
	guestOut := guestWork + "/out/" + id
	if err := os.WriteFile(filepath.Join(runDir, "payload.sh"), []byte(j.payload(j.kernel, j.devices, guestOut)), 0o755); err != nil {
		return runReport{}, err
	}
	timeout := s.opts.timeout
	if j.suffix == raceSuffix || j.suffix == siwRaceSuffix {
		timeout *= raceSlowdown
	}
	vm := &vmRun{
		Kernel: j.kernel, Devices: j.devices, Suffix: j.suffix, Image: f.image, Initrd: f.initrd,
		Work: s.work, ID: id, Src: s.module.Root,
		Mem: s.opts.mem, SMP: s.opts.smp, Timeout: timeout,
		Verbose: s.opts.verbose, Append: s.opts.append, CPU: s.opts.cpu, Out: out, Wire: j.wire,
	}
	rep := runReport{Name: vm.name()}
	if watch != nil {
		vm.Payload = watch(&rep)
	}
	fmt.Fprintf(s.stderr, "vm: booting %s\n", vm.name())
	res, err := vm.boot(ctx, s.tools.qemu)
	rep.Result, rep.Err = res, err
	if err != nil {
		fmt.Fprintf(s.stderr, "vm: %s: %v\n", vm.name(), err)
	} else {
		fmt.Fprintf(s.stderr, "vm: %s: exit status %d (boot %s, total %s)\n",
			vm.name(), res.Status, seconds(res.Boot), seconds(res.Total))
	}
	return rep, nil
}

// crashSummary names a guest's crash for the summary: its headline,
// where the kernel was, and the test that was running.
func crashSummary(rep runReport) string {
	s := rep.Result.crash()
	if t := rep.Tally.running; t != "" {
		s += ", during " + rep.Tally.where() + t
	}
	return s
}

// crashBoots is how many times a single guest boots while its kernel
// crashes: 6.12 guests crash now and then under TCG (docs/testing.md),
// and CI's first two runs of 2026-12-05 each crashed the 16-device 6.12
// guest once, where no run here ever did.
const crashBoots = 3

// bootRetrying is boot, and boots the guest again while its kernel
// crashed, crashBoots times in all: the earlier boots' output stays in
// out, and the report notes each crash. A crash on the last boot, and
// every other failure, stands.
func (s *session) bootRetrying(ctx context.Context, j vmJob, f bootFiles, out io.Writer,
	watch func(*runReport) func(string)) (runReport, error) {
	var crashes []string
	for {
		rep, err := s.boot(ctx, j, f, out, watch)
		if len(crashes) > 0 {
			rep.Note = fmt.Sprintf("booted %d times: its kernel crashed before (%s)", len(crashes)+1, strings.Join(crashes, "; then "))
		}
		if err != nil || rep.Result.Crash == "" || len(crashes)+1 == crashBoots {
			return rep, err
		}
		crashes = append(crashes, crashSummary(rep))
		msg := fmt.Sprintf("vm: the kernel of %s crashed (%s): booting it again\n", rep.Name, crashes[len(crashes)-1])
		io.WriteString(out, msg)
		io.WriteString(s.stderr, msg)
	}
}

// firstCountOnly are the packages whose tests run with the first device
// count only: the drop-ins' engines, whose integration tests drive ours
// against the C tools on the first device (rxe0, or the address on it)
// whatever the count, and the stream package, which runs on rdma's
// exported API over the first device (224 s of a 599 s 16-device run;
// rdma's own tests, the device list and the CM with 16 devices included,
// still run with each count), and the discovery comparison of module
// bench/k8s, whose rdmamap side takes 142 s with 16 devices (its
// benchmark says how it scales). Every other package, the enumeration
// and the library, runs with each count.
var firstCountOnly = []string{
	"bench/k8s",
	"rdma/rsocket",
	"cmd/internal/cmatose", "cmd/internal/cmtime", "cmd/internal/mckey",
	"cmd/internal/perftest", "cmd/internal/pingpong", "cmd/internal/rcopy",
	"cmd/internal/rdmaep", "cmd/internal/riostream", "cmd/internal/rping",
	"cmd/internal/rstream", "cmd/internal/udaddy",
}

// binsForCount is bins without the firstCountOnly packages' unless first
// (the run has the first device count).
func binsForCount(bins []testBinary, module string, first bool) []testBinary {
	if first {
		return bins
	}
	var out []testBinary
	for _, b := range bins {
		if !slices.Contains(firstCountOnly, strings.TrimPrefix(b.ImportPath, module+"/")) {
			out = append(out, b)
		}
	}
	return out
}

// bounded calls run(0) … run(n-1) on goroutines, up to parallel at
// once, starting them in order, and waits for them all. Once ctx is
// done it starts no more and returns an "interrupted" error.
func bounded(ctx context.Context, n, parallel int, run func(i int)) error {
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(1, parallel))
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			run(i)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %v", ctx.Err())
	}
	return nil
}

// writeOutput writes one guest's output as a block headed by its name.
func writeOutput(w io.Writer, name string, out *bytes.Buffer) {
	fmt.Fprintf(w, "vm: ===== output of %s =====\n", name)
	w.Write(out.Bytes())
}
