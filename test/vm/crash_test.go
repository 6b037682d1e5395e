package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCrashStarts: die()'s banner, a double fault and a panic start a
// crash, as the 6.1 and 6.12 guests print them; warnings, lockups and
// test output do not.
func TestCrashStarts(t *testing.T) {
	for line, want := range map[string]bool{
		"[  108.401234] Oops: 0000 [#1] PREEMPT SMP NOPTI":                                                  true,
		"[   52.112233] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP": true,
		"[   77.000001] Oops: invalid opcode: 0000 [#2] PREEMPT SMP NOPTI":                                  true,
		"[  311.554001] traps: PANIC: double fault, error_code: 0x0":                                        true,
		"[  128.749846] Kernel panic - not syncing: Fatal exception in interrupt":                           true,
		"[   12.000000] WARNING: CPU: 0 PID: 1 at net/core/dev.c:1 f+0x1/0x2":                               false,
		"[   40.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!":                                  false,
		"[  221.279294] rxe0: srq#131077 rxe_modify_srq: returned err = -22":                                false,
		"--- FAIL: TestWireX (1.00s)":                                                                       false,
		"":                                                                                                  false,
	} {
		if got := crashStarts(line); got != want {
			t.Errorf("crashStarts(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestCrashHeadline: the BUG line just before the banner names a crash;
// without one, the banner does.
func TestCrashHeadline(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"x", "[ 1.0] BUG: kernel NULL pointer dereference, address: 0000000000000008", "[ 1.0] #PF: supervisor read access in kernel mode", "[ 1.0] #PF: error_code(0x0000) - not-present page", "[ 1.0] PGD 0 P4D 0 ", "[ 1.0] Oops: 0000 [#1] PREEMPT SMP NOPTI"},
			"[ 1.0] BUG: kernel NULL pointer dereference, address: 0000000000000008"},
		{[]string{"[ 0.5] BUG: old news", "a", "b", "c", "d", "e", "[ 1.0] traps: PANIC: double fault, error_code: 0x0"},
			"[ 1.0] traps: PANIC: double fault, error_code: 0x0"},
		{[]string{"[ 1.0] kernel BUG at mm/slub.c:123!", "[ 1.0] Oops: invalid opcode: 0000 [#1] SMP"}, "[ 1.0] kernel BUG at mm/slub.c:123!"},
		{nil, ""},
	} {
		if got := crashHeadline(tc.lines); got != tc.want {
			t.Errorf("crashHeadline(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

// TestBootRetrying: a guest whose kernel crashed boots once more, its
// first output kept and its report noting it; a second crash stands.
func TestBootRetrying(t *testing.T) {
	for _, tc := range []struct {
		crashes   int
		wantErr   bool
		wantBoots string
	}{
		{0, false, "boot 1\n"},
		{1, false, "boot 1\nboot 2\n"},
		{2, true, "boot 1\nboot 2\n"},
	} {
		dir := t.TempDir()
		count := filepath.Join(dir, "boots")
		qemu := fakeQEMU(t, fmt.Sprintf(`echo x >> %[1]s; n=$(wc -l < %[1]s); echo VM-READY; echo "boot $n"
if [ "$n" -le %[2]d ]; then echo '[ 9.9] Kernel panic - not syncing: Fatal exception'; exit 0; fi
echo VM-EXIT-STATUS=0`, count, tc.crashes))
		var out, stderr strings.Builder
		s := &session{opts: &options{timeout: 20 * time.Second, mem: 256, smp: 1}, tools: &tools{qemu: qemu},
			work: dir, stdout: &out, stderr: &stderr}
		j := vmJob{kernel: kernel{Release: "6.12.118+deb12-amd64"}, devices: 16,
			payload: func(kernel, int, string) string { return "true" }}
		rep, err := s.bootRetrying(context.Background(), j, bootFiles{}, &out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(out.String(), "boot "); got != strings.Count(tc.wantBoots, "boot ") {
			t.Errorf("%d crashes: output %q, want the boots %q", tc.crashes, out.String(), tc.wantBoots)
		}
		if (rep.Err != nil) != tc.wantErr {
			t.Errorf("%d crashes: report's error %v, want one: %v", tc.crashes, rep.Err, tc.wantErr)
		}
		if wantNote := tc.crashes > 0; (rep.Note != "") != wantNote || wantNote && !strings.Contains(rep.Note, "Kernel panic") {
			t.Errorf("%d crashes: note %q", tc.crashes, rep.Note)
		}
		if tc.crashes > 0 && !strings.Contains(stderr.String(), "booting it once more") {
			t.Errorf("%d crashes: stderr %q does not say the guest boots again", tc.crashes, stderr.String())
		}
	}
}
