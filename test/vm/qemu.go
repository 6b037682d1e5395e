package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// consoleTail is how many console lines a boot failure prints.
const consoleTail = 50

// vmRun is one guest boot: a kernel and a device count.
type vmRun struct {
	Kernel  kernel
	Devices int
	Suffix  string // tells apart runs of one kernel and device count ("race"); "siw" and "siw-race" make siw guests
	Image   string // the kernel for -kernel: a vmlinux or the bzImage
	Initrd  string
	Work    string // host work directory, the guest's /tmp/vm
	// Src is the module's root. The guest sees the host's root, but mounts
	// tmpfs over /tmp and /run: a checkout under them is shared on its own
	// and mounted at the same path.
	Src     string
	ID      string // the payload is Work/run/ID/payload.sh
	Mem     int
	SMP     int
	Timeout time.Duration
	Verbose bool
	Append  string    // more kernel command-line arguments
	CPU     string    // QEMU's -cpu model ("max" when empty)
	Out     io.Writer // guest output
	// ExitGrace is how long the guest may take to power off after the
	// payload's status came; zero means 15 s.
	ExitGrace time.Duration
	// CrashGrace is how long the guest may go on once its kernel has
	// begun a crash report; zero means crashGrace.
	CrashGrace time.Duration
	// Payload, if set, sees each line the payload printed (after VM-READY).
	Payload func(line string)
	// Wire, if set, makes the guest one end of a two-guest wire: eth0 on a
	// host UDP socket, rxe0 on it (Devices is then 1).
	Wire *wireEnd
}

// vmResult is what came back from a guest that ran its payload.
type vmResult struct {
	Status int           // the payload's exit status
	Boot   time.Duration // QEMU start to VM-READY
	Total  time.Duration // QEMU start to the payload's end
	// Crash, if set, is the headline of the kernel crash that ended the
	// guest before its payload did (see crashStarts); CrashPlace says
	// where it happened (see crashPlace), if the report said.
	Crash      string
	CrashPlace string
}

// crash is the crash's headline and, if the report said, where the
// kernel was ("BUG: … at RIP: …; called from …"); "" without a crash.
func (r vmResult) crash() string {
	if r.CrashPlace == "" {
		return r.Crash
	}
	return r.Crash + " at " + r.CrashPlace
}

func (r *vmRun) name() string {
	if r.Wire != nil {
		return r.Wire.name(r.Kernel)
	}
	n := fmt.Sprintf("kernel %s, %d devices", r.Kernel.Release, r.Devices)
	if r.Suffix != "" {
		n += ", " + r.Suffix
	}
	return n
}

// qemuArgs is the QEMU command line: TCG (KVM hangs on this machine kind),
// no default devices, the serial console on stdio, the host's root
// read-only and the work directory writable over 9p.
func (r *vmRun) qemuArgs() []string {
	nic := []string{"-nic", "none"}
	if r.Wire != nil {
		nic = r.Wire.qemuArgs()
	}
	return append([]string{
		"-accel", "tcg",
		"-cpu", cmp.Or(r.CPU, "max"),
		"-m", strconv.Itoa(r.Mem),
		"-smp", strconv.Itoa(r.SMP),
		"-nodefaults", "-no-user-config",
		"-display", "none",
		"-no-reboot",
		"-chardev", "stdio,id=console,signal=off",
		"-serial", "chardev:console",
		"-monitor", "none",
		"-kernel", r.Image,
		"-initrd", r.Initrd,
		"-append", r.cmdline(),
		"-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path=" + r.Work + ",mount_tag=work,security_model=none",
		"-virtfs", "local,path=" + r.srcShare() + ",mount_tag=src,security_model=none,readonly=on,multidevs=remap",
	}, nic...)
}

// srcShare is the directory shared as "src": the module root, or / when
// there is none (the share is then unused).
func (r *vmRun) srcShare() string {
	if r.Src == "" {
		return "/"
	}
	return r.Src
}

// cmdline is the guest kernel's command line. A panic ends the VM (QEMU
// runs with -no-reboot), and so does an oops: a kernel bug hit by a test
// must not go unnoticed. -v shows all the kernel's messages.
// no_timer_check: under TCG on a busy host the boot-time check that the
// IO-APIC timer ticks can miss its window and panic ("IO-APIC + timer
// doesn't work"), seen with two guests and other work on two cores.
func (r *vmRun) cmdline() string {
	c := "console=ttyS0 panic=-1 panic_on_oops=1 no_timer_check"
	if !r.Verbose {
		c += " quiet"
	}
	c += fmt.Sprintf(" rdmastack.devices=%d rdmastack.run=%s", r.Devices, r.ID)
	if r.Src != "" {
		c += " rdmastack.src=" + r.Src
	}
	if r.Wire != nil {
		c += fmt.Sprintf(" rdmastack.wire=%d", r.Wire.host())
	}
	if isSIWSuffix(r.Suffix) || r.Wire != nil && r.Wire.SIW {
		c += " rdmastack.siw=1"
	}
	if a := strings.TrimSpace(r.Append); a != "" {
		c += " " + a
	}
	return c
}

// boot runs QEMU until the guest powers off, streaming the payload's output
// to r.Out. It returns an error if the guest did not run the payload to its
// end: a setup failure, a crash or the timeout. The error does not repeat
// r.name().
func (r *vmRun) boot(ctx context.Context, qemu string) (vmResult, error) {
	if strings.ContainsAny(r.Work, ",") {
		return vmResult{}, fmt.Errorf("work directory %q: QEMU's -virtfs does not allow commas", r.Work)
	}
	if strings.ContainsAny(r.Src, ", \t\n\"'\\") {
		return vmResult{}, fmt.Errorf("module directory %q: QEMU's -virtfs and the kernel command line need a path without commas, spaces or quotes", r.Src)
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()

	pr, pw, err := os.Pipe()
	if err != nil {
		return vmResult{}, err
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, qemu, r.qemuArgs()...)
	cmd.Stdin = nil // /dev/null: nothing reaches the console
	cmd.Stdout = pw
	cmd.Stderr = pw
	// In its own process group, killed as a whole: nothing may keep the
	// console pipe open once the VM is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return vmResult{}, err
	}
	pw.Close()

	var (
		res        vmResult
		ready      bool
		exited     bool
		setupError string
		tail       = newRing(consoleTail)
		last       string
		place      crashPlace
	)
	// Once the payload's status is in, the guest only has to power off; do
	// not let a stuck shutdown fail the run. Once its kernel has crashed,
	// it has crashGrace to print its report and power off.
	var stopAfterExit, stopAfterCrash *time.Timer
	defer func() {
		for _, t := range []*time.Timer{stopAfterExit, stopAfterCrash} {
			if t != nil {
				t.Stop()
			}
		}
	}()
	readLines(pr, func(line string) {
		tail.add(line)
		if strings.TrimSpace(line) != "" {
			last = line
		}
		if r.Verbose {
			fmt.Fprintln(r.Out, line)
		}
		if !exited && res.Crash == "" && crashStarts(line) {
			res.Crash = crashHeadline(tail.lines())
			stopAfterCrash = time.AfterFunc(cmp.Or(r.CrashGrace, crashGrace), cancel)
		}
		if res.Crash != "" {
			place.add(line)
		}
		switch {
		case line == markerReady && !ready:
			ready = true
			res.Boot = time.Since(start)
			return
		case strings.HasPrefix(line, markerFailed) && !ready:
			setupError = strings.TrimPrefix(line, markerFailed)
			return
		case ready && !exited && strings.HasPrefix(line, markerExit):
			if n, err := strconv.Atoi(strings.TrimPrefix(line, markerExit)); err == nil {
				exited = true
				res.Status = n
				res.Total = time.Since(start)
				grace := r.ExitGrace
				if grace <= 0 {
					grace = 15 * time.Second
				}
				stopAfterExit = time.AfterFunc(grace, cancel)
				return
			}
		}
		if ready && !exited {
			if !r.Verbose {
				fmt.Fprintln(r.Out, line)
			}
			if r.Payload != nil {
				r.Payload(line)
			}
		}
	})
	waitErr := cmd.Wait()
	res.CrashPlace = place.String()
	if res.Total == 0 {
		res.Total = time.Since(start)
	}

	if exited {
		return res, nil
	}
	switch {
	case res.Crash != "":
		err = fmt.Errorf("its kernel crashed: %q", truncate(res.crash(), 600))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("timed out after %v (last output: %q)", r.Timeout, truncate(last, 200))
	case ctx.Err() != nil:
		return res, ctx.Err() // interrupted: no console dump
	case setupError != "":
		err = errors.New("guest setup failed: " + setupError)
	case ready:
		err = errors.New("guest stopped before the payload finished")
	default:
		err = errors.New("guest did not boot")
	}
	if waitErr != nil && ctx.Err() == nil {
		err = fmt.Errorf("%v (qemu: %v)", err, waitErr)
	}
	// The payload's output has been shown already; what led to a boot
	// failure has not.
	if !r.Verbose && !ready {
		lines := tail.lines()
		fmt.Fprintf(r.Out, "vm: %s: last %d lines of the console:\n", r.name(), len(lines))
		for _, l := range lines {
			fmt.Fprintln(r.Out, "  | "+l)
		}
	}
	return res, err
}

// truncate shortens s to at most n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// readLines calls fn for each line of rd, without "\r" and "\n"; a line
// longer than the buffer is split.
func readLines(rd io.Reader, fn func(string)) {
	br := bufio.NewReaderSize(rd, 64<<10)
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 {
			fn(strings.ReplaceAll(strings.TrimSuffix(string(b), "\n"), "\r", ""))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// ring keeps the last n lines.
type ring struct {
	buf  []string
	next int
	full bool
}

func newRing(n int) *ring { return &ring{buf: make([]string, n)} }

func (r *ring) add(s string) {
	r.buf[r.next] = s
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

func (r *ring) lines() []string {
	if !r.full {
		return append([]string(nil), r.buf[:r.next]...)
	}
	return append(append([]string(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}
