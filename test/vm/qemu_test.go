package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeQEMU writes a shell script that stands in for QEMU and prints what a
// guest would print on its console.
func fakeQEMU(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "qemu")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func testRun(t *testing.T, out *strings.Builder) *vmRun {
	return &vmRun{
		Kernel:  kernel{Release: "6.1.0-57-amd64", Image: "/boot/vmlinuz-6.1.0-57-amd64"},
		Devices: 2,
		Work:    t.TempDir(),
		ID:      "x",
		Mem:     1024,
		SMP:     1,
		Timeout: 20 * time.Second,
		Out:     out,
	}
}

func TestBootSuccess(t *testing.T) {
	qemu := fakeQEMU(t, `printf 'SeaBIOS\r\n[    0.1] boot noise\r\nvm: init\r\nVM-READY\r\n'
echo '[{"ifname":"rxe0"}]'
echo '--- PASS: TestX (0.00s)'
echo 'VM-EXIT-STATUS=3'
echo '[    3.8] reboot: Power down'
`)
	var out strings.Builder
	r := testRun(t, &out)
	var seen []string
	r.Payload = func(l string) { seen = append(seen, l) }
	res, err := r.boot(context.Background(), qemu)
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	if res.Status != 3 {
		t.Errorf("status %d, want 3", res.Status)
	}
	if res.Boot <= 0 || res.Total < res.Boot {
		t.Errorf("times: boot %v, total %v", res.Boot, res.Total)
	}
	want := "[{\"ifname\":\"rxe0\"}]\n--- PASS: TestX (0.00s)\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	if diff := cmp.Diff([]string{`[{"ifname":"rxe0"}]`, "--- PASS: TestX (0.00s)"}, seen); diff != "" {
		t.Errorf("payload lines (-want +got):\n%s", diff)
	}
}

func TestBootVerbose(t *testing.T) {
	qemu := fakeQEMU(t, `echo noise; echo VM-READY; echo hi; echo VM-EXIT-STATUS=0`)
	var out strings.Builder
	r := testRun(t, &out)
	r.Verbose = true
	if _, err := r.boot(context.Background(), qemu); err != nil {
		t.Fatal(err)
	}
	if want := "noise\nVM-READY\nhi\nVM-EXIT-STATUS=0\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestBootSetupFailure(t *testing.T) {
	qemu := fakeQEMU(t, `i=0; while [ $i -lt 80 ]; do echo "noise $i"; i=$((i+1)); done
echo 'VM-SETUP-FAILED: insmod /lib/modules/x/rdma_rxe.ko'
echo '[    3.8] reboot: Power down'`)
	var out strings.Builder
	r := testRun(t, &out)
	_, err := r.boot(context.Background(), qemu)
	if err == nil || !strings.Contains(err.Error(), "guest setup failed: insmod /lib/modules/x/rdma_rxe.ko") {
		t.Fatalf("boot: %v, want a setup failure", err)
	}
	// The console tail is printed: the last 50 lines, not the first ones.
	if !strings.Contains(out.String(), "noise 79") || strings.Contains(out.String(), "noise 29\n") {
		t.Errorf("console tail:\n%s", out.String())
	}
}

func TestBootQEMUFails(t *testing.T) {
	qemu := fakeQEMU(t, `echo 'qemu-system-x86_64: -kernel: no such file' >&2; exit 1`)
	var out strings.Builder
	_, err := testRun(t, &out).boot(context.Background(), qemu)
	if err == nil || !strings.Contains(err.Error(), "guest did not boot") {
		t.Fatalf("boot: %v, want a boot failure", err)
	}
	if !strings.Contains(out.String(), "no such file") {
		t.Errorf("console tail lacks QEMU's message:\n%s", out.String())
	}
}

func TestBootStopsEarly(t *testing.T) {
	qemu := fakeQEMU(t, `echo VM-READY; echo 'test output'`)
	var out strings.Builder
	res, err := testRun(t, &out).boot(context.Background(), qemu)
	if err == nil || !strings.Contains(err.Error(), "before the payload finished") || res.Crash != "" {
		t.Fatalf("boot: %v (crash %q)", err, res.Crash)
	}
}

// TestBootKernelCrash: a kernel that panics ends the guest with its
// crash named, and so does one that hangs in the middle of its report
// (seen under TCG), after CrashGrace rather than the run's timeout.
func TestBootKernelCrash(t *testing.T) {
	const bug = "[  108.400000] BUG: unable to handle page fault for address: ffff888000000000"
	for name, script := range map[string]string{
		"panic": `echo VM-READY; echo '` + bug + `'; echo '[  108.4] Oops: 0000 [#1] PREEMPT SMP NOPTI'; echo '[  108.41] RIP: 0010:rxe_f+0x1/0x2 [rdma_rxe]'; echo '[  108.5] Kernel panic - not syncing: Fatal exception'`,
		"hang":  `echo VM-READY; echo '` + bug + `'; echo '[  108.4] Oops: 0000 [#1] PREEMPT SMP NOPTI'; echo '[  108.483014] PKRU: 55555554'; sleep 30`,
	} {
		qemu := fakeQEMU(t, script)
		var out strings.Builder
		r := testRun(t, &out)
		r.Timeout = time.Minute
		r.CrashGrace = 300 * time.Millisecond
		start := time.Now()
		res, err := r.boot(context.Background(), qemu)
		if res.Crash != bug || err == nil || !strings.Contains(err.Error(), "its kernel crashed") || !strings.Contains(err.Error(), "page fault") {
			t.Errorf("%s: boot: %v, crash %q; want the BUG line", name, err, res.Crash)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: boot took %v with a 300ms crash grace", name, d)
		}
		if wantRIP := name == "panic"; strings.Contains(err.Error(), "RIP: 0010:rxe_f+0x1/0x2 [rdma_rxe]") != wantRIP {
			t.Errorf("%s: boot: %v; its RIP named: want %v", name, err, wantRIP)
		}
		if !strings.Contains(out.String(), "Oops: 0000") {
			t.Errorf("%s: the crash report was not printed:\n%s", name, out.String())
		}
	}
}

func TestBootTimeout(t *testing.T) {
	// The child sleep keeps the console pipe open: boot must kill the
	// whole process group.
	qemu := fakeQEMU(t, `echo VM-READY; echo 'still going'; sleep 30; echo never`)
	var out strings.Builder
	r := testRun(t, &out)
	r.Timeout = 500 * time.Millisecond
	start := time.Now()
	_, err := r.boot(context.Background(), qemu)
	if err == nil || !strings.Contains(err.Error(), "timed out after 500ms") || !strings.Contains(err.Error(), "still going") {
		t.Fatalf("boot: %v, want a timeout naming the last output", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("boot took %v after a 500ms timeout", d)
	}
}

func TestBootNoPowerOff(t *testing.T) {
	qemu := fakeQEMU(t, `echo VM-READY; echo VM-EXIT-STATUS=0; sleep 30`)
	var out strings.Builder
	r := testRun(t, &out)
	r.ExitGrace = 200 * time.Millisecond
	start := time.Now()
	res, err := r.boot(context.Background(), qemu)
	if err != nil || res.Status != 0 {
		t.Fatalf("boot: %v, %v; want success", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("boot took %v", d)
	}
}

func TestBootRejectsCommaInWork(t *testing.T) {
	var out strings.Builder
	r := testRun(t, &out)
	r.Work = "/tmp/a,b"
	if _, err := r.boot(context.Background(), "/bin/false"); err == nil {
		t.Error("no error for a work directory with a comma")
	}
}

func TestQEMUArgs(t *testing.T) {
	var out strings.Builder
	r := testRun(t, &out)
	r.Image, r.Initrd, r.Work, r.ID, r.Devices = "/k/vmlinux", "/w/initrd", "/w", "6.1.0-57-amd64-16", 16
	args := strings.Join(r.qemuArgs(), " ")
	for _, want := range []string{
		"-accel tcg", "-m 1024", "-no-reboot", "-kernel /k/vmlinux", "-initrd /w/initrd",
		"rdmastack.devices=16 rdmastack.run=6.1.0-57-amd64-16",
		"path=/,mount_tag=hostroot,security_model=none,readonly=on",
		"path=/w,mount_tag=work,security_model=none",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("qemu args lack %q: %s", want, args)
		}
	}
	if strings.Contains(args, "kvm") {
		t.Errorf("qemu args use KVM: %s", args)
	}
	if !strings.Contains(args, "-cpu max ") {
		t.Errorf("qemu args without -cpu: %s, want max", args)
	}
	r.CPU = "Skylake-Client"
	if args := strings.Join(r.qemuArgs(), " "); !strings.Contains(args, "-cpu Skylake-Client ") {
		t.Errorf("qemu args with -cpu Skylake-Client: %s", args)
	}
}

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 70<<10)
	var got []string
	readLines(strings.NewReader("a\r\nb\n\r\r\nc\rd\n"+long+"\nlast"), func(l string) { got = append(got, l) })
	if len(got) != 7 {
		t.Fatalf("got %d lines, want 7 (the long one split in two)", len(got))
	}
	if diff := cmp.Diff([]string{"a", "b", "", "cd"}, got[:4]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(got[4])+len(got[5]) != len(long) || got[6] != "last" {
		t.Errorf("long line split as %d+%d, last %q", len(got[4]), len(got[5]), got[6])
	}
}

func TestRing(t *testing.T) {
	r := newRing(3)
	if got := r.lines(); len(got) != 0 {
		t.Errorf("empty ring: %q", got)
	}
	for _, s := range []string{"1", "2"} {
		r.add(s)
	}
	if diff := cmp.Diff([]string{"1", "2"}, r.lines()); diff != "" {
		t.Error(diff)
	}
	for _, s := range []string{"3", "4", "5"} {
		r.add(s)
	}
	if diff := cmp.Diff([]string{"3", "4", "5"}, r.lines()); diff != "" {
		t.Error(diff)
	}
}

func TestBootTimeoutDuringBoot(t *testing.T) {
	qemu := fakeQEMU(t, `echo 'Booting the kernel'; sleep 30`)
	var out strings.Builder
	r := testRun(t, &out)
	r.Timeout = 300 * time.Millisecond
	_, err := r.boot(context.Background(), qemu)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("boot: %v, want a timeout", err)
	}
	if !strings.Contains(out.String(), "last 1 lines of the console") || !strings.Contains(out.String(), "| Booting the kernel") {
		t.Errorf("no console tail after a timeout during boot:\n%s", out.String())
	}
}

func TestBootInterrupted(t *testing.T) {
	qemu := fakeQEMU(t, `echo VM-READY; sleep 30`)
	var out strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := testRun(t, &out).boot(ctx, qemu)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("boot: %v, want context.Canceled", err)
	}
}
