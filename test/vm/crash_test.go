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

// TestBootRetrying: a guest whose kernel crashed boots again, up to
// crashBoots times, its earlier output kept and its report noting it; a
// crash on the last boot stands.
func TestBootRetrying(t *testing.T) {
	for _, tc := range []struct {
		crashes   int
		wantErr   bool
		wantBoots string
	}{
		{0, false, "boot 1\n"},
		{1, false, "boot 1\nboot 2\n"},
		{2, false, "boot 1\nboot 2\nboot 3\n"},
		{3, true, "boot 1\nboot 2\nboot 3\n"},
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
		wantNote := fmt.Sprintf("booted %d times", min(tc.crashes, crashBoots-1)+1)
		if (rep.Note != "") != (tc.crashes > 0) || tc.crashes > 0 && (!strings.Contains(rep.Note, "Kernel panic") || !strings.Contains(rep.Note, wantNote)) {
			t.Errorf("%d crashes: note %q", tc.crashes, rep.Note)
		}
		if tc.crashes > 0 && !strings.Contains(stderr.String(), "booting it again") {
			t.Errorf("%d crashes: stderr %q does not say the guest boots again", tc.crashes, stderr.String())
		}
	}
}

// trace612 is the body of a 6.12 guest's general protection fault as the
// console prints it (addresses and offsets made up).
var trace612 = []string{
	"[   86.301031] Oops: general protection fault, probably for non-canonical address 0x784f23778158c69d: 0000 [#1] PREEMPT SMP NOPTI",
	"[   86.301500] CPU: 0 UID: 0 PID: 1234 Comm: kworker/u4:2 Not tainted 6.12.118+deb12-amd64 #1  Debian 6.12.118-1",
	"[   86.301900] Workqueue: rxe_wq do_work [rdma_rxe]",
	"[   86.302000] RIP: 0010:kmem_cache_alloc_noprof+0x9d/0x2f0",
	"[   86.302100] Code: 00 00 48 8b 45 00 ...",
	"[   86.302200] RSP: 0018:ffffb0d1c0a3bd18 EFLAGS: 00010286",
	"[   86.302900] PKRU: 55555554",
	"[   86.303000] Call Trace:",
	"[   86.303010]  <TASK>",
	"[   86.303020]  ? die_addr+0x3c/0x60",
	"[   86.303030]  ? exc_general_protection+0x1c7/0x3d0",
	"[   86.303040]  rxe_alloc_pkt+0x2f/0x80 [rdma_rxe]",
	"[   86.303050]  rxe_requester+0x4d1/0x1150 [rdma_rxe]",
	"[   86.303060]  do_task+0x68/0x1e0 [rdma_rxe]",
	"[   86.303070]  process_one_work+0x177/0x330",
	"[   86.303080]  worker_thread+0x251/0x390",
	"[   86.303090]  </TASK>",
	"[   86.303100] Modules linked in: rdma_rxe ib_uverbs",
	"[   86.303200] RIP: 0010:kmem_cache_alloc_noprof+0x9d/0x2f0",
	"[   86.303300] Call Trace:",
	"[   86.303310]  later_frame+0x1/0x2",
	"[   86.303400] Kernel panic - not syncing: Fatal exception",
}

// TestCrashPlace: a crash's place is its first RIP line and the first
// functions of its first call trace, without guesses or marks.
func TestCrashPlace(t *testing.T) {
	var c crashPlace
	for _, l := range trace612 {
		c.add(l)
	}
	want := "RIP: 0010:kmem_cache_alloc_noprof+0x9d/0x2f0; called from rxe_alloc_pkt+0x2f/0x80 [rdma_rxe] < " +
		"rxe_requester+0x4d1/0x1150 [rdma_rxe] < do_task+0x68/0x1e0 [rdma_rxe] < process_one_work+0x177/0x330"
	if got := c.String(); got != want {
		t.Errorf("place:\n got %q\nwant %q", got, want)
	}
	var none crashPlace
	none.add("[ 1.0] traps: PANIC: double fault, error_code: 0x0")
	if got := none.String(); got != "" {
		t.Errorf("place of a report without RIP or trace: %q", got)
	}
}

// TestCrashSummary: the summary names the crash, where the kernel was,
// and the test that was running in the guest.
func TestCrashSummary(t *testing.T) {
	rep := runReport{Result: vmResult{Crash: "BUG: x", CrashPlace: "RIP: 0010:f+0x1/0x2"}}
	for _, l := range []string{"VM-TEST-START uverbs", "=== RUN   TestIntegrationA", "--- PASS: TestIntegrationA (0.1s)", "=== RUN   TestIntegrationB/sub"} {
		rep.Tally.line(l)
	}
	if got, want := crashSummary(rep), "BUG: x at RIP: 0010:f+0x1/0x2, during uverbs: TestIntegrationB/sub"; got != want {
		t.Errorf("crashSummary = %q, want %q", got, want)
	}
	if got := crashSummary(runReport{Result: vmResult{Crash: "BUG: y"}}); got != "BUG: y" {
		t.Errorf("crashSummary without place or test = %q", got)
	}
}
