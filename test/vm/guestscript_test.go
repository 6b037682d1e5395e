package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestInitScriptMarkers(t *testing.T) {
	wantAll(t, "init script", initScript,
		"echo "+markerReady+"\n",
		`echo "`+markerExit+`$?"`,
		markerFailed,
		"rdmastack.devices=",
		"/etc/modules.list",
		"poweroff -f",
	)
}

// TestInitScriptSyntax checks the init script with sh -n.
func TestInitScriptSyntax(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	cmd := exec.Command(sh, "-n")
	cmd.Stdin = strings.NewReader(initScript)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, out)
	}
}

// TestTestPayload runs a test payload with the host's sh over fake test
// binaries and feeds its output to the tally, as the VM run does.
func TestTestPayload(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, script string) testBinary {
		t.Helper()
		p := filepath.Join(dir, name+".test")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, "src", name)
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		return testBinary{Name: name, SourceDir: src, GuestPath: p}
	}
	bins := []testBinary{
		fake("good", `echo "args: $*"; echo "cwd: $(basename "$PWD")"; case $0 in /tmp/vmtest.*) echo "run from a copy";; esac; echo "env: $RDMASTACK_VM $RDMASTACK_VM_KERNEL $RDMASTACK_VM_DEVICES $RDMASTACK_OUT"; echo "--- PASS: TestA (0.00s)"`),
		fake("bad", `echo "--- FAIL: TestB (0.00s)"; exit 1`),
		fake("crash", `echo "panic: boom"; exit 2`),
	}
	k := kernel{Release: "6.1.0-57-amd64"}
	script := testPayload(k, 2, "/tmp/vm/out/x", bins, []string{"-test.run", "Test A"})
	cmd := exec.Command("sh", "-c", script)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("payload: %v, want exit status 1\n%s", err, out)
	}
	wantAll(t, "payload output", string(out),
		"args: -test.v -test.count=1 -test.run Test A\n",
		"cwd: good\n",
		"run from a copy\n",
		"env: 1 6.1.0-57-amd64 2 /tmp/vm/out/x\n",
		"VM-TEST-EXIT good 0\n",
		"VM-TEST-EXIT bad 1\n",
		"VM-TEST-EXIT crash 2\n",
	)
	var tl tally
	for _, l := range strings.Split(string(out), "\n") {
		tl.line(l)
	}
	if tl.Passed != 1 || tl.Failed != 2 || tl.Skipped != 0 {
		t.Errorf("tally: %d passed, %d failed, %d skipped; want 1, 2, 0\n%s", tl.Passed, tl.Failed, tl.Skipped, out)
	}
}

func TestRunPayload(t *testing.T) {
	dir := t.TempDir()
	k := kernel{Release: "6.12.117+deb12-amd64"}
	script := runPayload(k, 16, "/tmp/vm/out/y", dir, []string{"sh", "-c", `echo "$RDMASTACK_VM_DEVICES $(basename "$PWD") $1"; exit 7`, "-", "it's"})
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("payload: %v, want exit status 7\n%s", err, out)
	}
	if want := "16 " + filepath.Base(dir) + " it's\n"; string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
}
