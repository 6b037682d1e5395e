package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// iproute2 runs the rdma oracle and returns its stdout and whether it
// exited zero.
func iproute2(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	return testenv.Output(t, testenv.Oracle(t, "rdma"), args...)
}

func ours(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	err := run(&out, args)
	return out.String(), err == nil
}

// versionAdjust removes from our output what the installed iproute2 does
// not print yet, naming each known difference explicitly.
func versionAdjust(t *testing.T, s string) string {
	v := testenv.Iproute2Version(t, testenv.Oracle(t, "rdma"))
	if v[0]*100+v[1] < 605 {
		// The protocol field came with iproute2 6.5 (commit bc42cde0).
		s = regexp.MustCompile(`protocol \S+ `).ReplaceAllString(s, "")
	}
	return s
}

func versionAdjustJSON(t *testing.T, objs []map[string]any) {
	v := testenv.Iproute2Version(t, testenv.Oracle(t, "rdma"))
	if v[0]*100+v[1] < 605 {
		for _, o := range objs {
			delete(o, "protocol")
		}
	}
}

// TestIntegrationDevShowText compares "rdma [-d] dev show [DEV]" text with
// iproute2's, byte for byte.
func TestIntegrationDevShowText(t *testing.T) {
	testenv.RequireRDMA(t)
	theirs, _ := iproute2(t, "dev", "show")
	first := strings.SplitN(strings.TrimSpace(theirs), ": ", 3)
	if len(first) < 2 {
		t.Fatalf("iproute2 printed no device: %q", theirs)
	}
	compareDevShowText(t, first[1])
}

// TestIntegrationSIWDevShow compares "rdma dev show", text and JSON, on the
// siw guest's iWARP devices.
func TestIntegrationSIWDevShow(t *testing.T) {
	e := testenv.SIW(t)
	compareDevShowText(t, e.Dev)
	compareDevShowText(t, e.PeerDev)
	compareDevShowJSON(t)
}

// compareDevShowText compares the text of all devices and of dev.
func compareDevShowText(t *testing.T, dev string) {
	t.Helper()
	for _, args := range [][]string{
		{"dev", "show"},
		{"dev"},
		{"-d", "dev", "show"},
		{"dev", "list", dev},
		{"-d", "dev", "show", dev},
	} {
		want, ok := iproute2(t, args...)
		if !ok {
			t.Fatalf("iproute2 rdma %q failed", args)
		}
		got, ok := ours(t, args...)
		if !ok {
			t.Fatalf("rdma %q failed", args)
		}
		if got = versionAdjust(t, got); got != want {
			t.Errorf("rdma %q:\n got %q\nwant %q", args, got, want)
		}
	}
}

// TestIntegrationDevShowJSON compares "rdma -j [-p] [-d] dev show" with
// iproute2's, parsed.
func TestIntegrationDevShowJSON(t *testing.T) {
	testenv.RequireRDMA(t)
	compareDevShowJSON(t)
}

func compareDevShowJSON(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{
		{"-j", "dev", "show"},
		{"-j", "-p", "dev", "show"},
		{"-j", "-d", "dev", "show"},
	} {
		want, ok := iproute2(t, args...)
		if !ok {
			t.Fatalf("iproute2 rdma %q failed", args)
		}
		got, ok := ours(t, args...)
		if !ok {
			t.Fatalf("rdma %q failed", args)
		}
		var w, g []map[string]any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatalf("iproute2 %q: %v in %q", args, err, want)
		}
		if err := json.Unmarshal([]byte(got), &g); err != nil {
			t.Fatalf("ours %q: %v in %q", args, err, got)
		}
		versionAdjustJSON(t, g)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("rdma %q (-iproute2 +ours):\n%s", args, diff)
		}
		if len(g) == 0 {
			t.Errorf("rdma %q listed no device", args)
		}
	}
}

// TestIntegrationDevShowUnknown: both tools fail on a device that is not
// there.
func TestIntegrationDevShowUnknown(t *testing.T) {
	testenv.RequireRDMA(t)
	if _, ok := iproute2(t, "dev", "show", "nosuchdev9"); ok {
		t.Fatal("iproute2 accepted an unknown device")
	}
	var out bytes.Buffer
	err := run(&out, []string{"dev", "show", "nosuchdev9"})
	if err == nil || !strings.Contains(err.Error(), "Wrong device name - nosuchdev9") {
		t.Fatalf("unknown device: %v", err)
	}
}

// TestIntegrationLinkShow compares "rdma link" output and exit status with
// iproute2's for every form of DEV/PORT, text and JSON.
func TestIntegrationLinkShow(t *testing.T) {
	testenv.RequireRDMA(t)
	theirs, _ := iproute2(t, "dev", "show")
	first := strings.SplitN(strings.TrimSpace(theirs), ": ", 3)
	if len(first) < 2 {
		t.Fatalf("iproute2 printed no device: %q", theirs)
	}
	compareLinkShow(t, first[1])
}

// TestIntegrationSIWLinkShow compares "rdma link", text and JSON, on the
// siw guest's iWARP devices.
func TestIntegrationSIWLinkShow(t *testing.T) {
	e := testenv.SIW(t)
	compareLinkShow(t, e.Dev)
	compareLinkShow(t, e.PeerDev)
}

// compareLinkShow compares all links and every form of dev's.
func compareLinkShow(t *testing.T, dev string) {
	t.Helper()
	for _, args := range [][]string{
		{"link"}, {"link", "show"}, {"-d", "link", "show"}, {"link", "list", dev + "/1"},
		{"-d", "link", "show", dev + "/1"}, {"link", "show", dev}, {"link", "show", dev + "/2"},
		{"link", "show", dev + "/0"}, {"link", "show", dev + "/-"}, {"link", "show", "nosuch/1"},
	} {
		want, wantOK := iproute2(t, args...)
		got, gotOK := ours(t, args...)
		if gotOK != wantOK {
			t.Errorf("rdma %q: ours succeeded=%v, iproute2 succeeded=%v", args, gotOK, wantOK)
			continue
		}
		if got != want {
			t.Errorf("rdma %q:\n got %q\nwant %q", args, got, want)
		}
		jargs := append([]string{"-j"}, args...)
		want, _ = iproute2(t, jargs...)
		got, _ = ours(t, jargs...)
		var w, g any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatalf("iproute2 %q: %v in %q", jargs, err, want)
		}
		if err := json.Unmarshal([]byte(got), &g); err != nil {
			t.Fatalf("ours %q: %v in %q", jargs, err, got)
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("rdma %q (-iproute2 +ours):\n%s", jargs, diff)
		}
	}
}

// TestIntegrationMonitor runs "rdma monitor" in-process while a device is
// added and deleted, and checks the lines it prints (iproute2 6.1 has no
// monitor to compare with; the format is HEAD's rdma/monitor.c).
func TestIntegrationMonitor(t *testing.T) {
	testenv.RequireRDMA(t)
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	if sys.Monitor == nil {
		if _, ok := ours(t, "monitor"); ok {
			t.Fatal("monitor succeeded on a kernel without RDMA monitoring")
		}
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &testenv.Buffer{}
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- monitor(ctx, out, options{}, ready) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("monitor: %v", err)
	}

	ip := testenv.Oracle(t, "ip")
	testenv.Run(t, ip, "link", "add", "rdmstmon1", "type", "dummy")
	t.Cleanup(func() { exec.Command(ip, "link", "del", "rdmstmon1").Run() })
	testenv.Run(t, ip, "link", "set", "rdmstmon1", "up")
	if _, ok := ours(t, "link", "add", "rxemon1", "type", "rxe", "netdev", "rdmstmon1"); !ok {
		t.Fatal("link add failed")
	}
	if _, ok := ours(t, "link", "delete", "rxemon1"); !ok {
		t.Fatal("link delete failed")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "[UNREGISTER]\tdev ") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("monitor: %v", err)
	}
	text := out.String()
	for _, re := range []string{
		`(?m)^\[REGISTER\]\tdev \d+ rxemon1$`,
		`(?m)^\[NETDEV_ATTACH\]\tdev \d+ rxemon1 port 1 netdev \d+ rdmstmon1$`,
		`(?m)^\[UNREGISTER\]\tdev \d+ rxemon1$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("monitor output lacks %s:\n%s", re, text)
		}
	}
}

// TestIntegrationNoNetAdmin runs write commands without CAP_NET_ADMIN (this
// test binary as rdma, under setpriv with net_admin dropped from the
// bounding set): each fails with EPERM's text on stderr and exit status 1,
// and changes nothing.
func TestIntegrationNoNetAdmin(t *testing.T) {
	testenv.RequireRDMA(t)
	setpriv := testenv.Oracle(t, "setpriv")
	before, _ := ours(t, "-j", "-d", "dev")
	dev := strings.SplitN(strings.TrimSpace(func() string { s, _ := ours(t, "dev"); return s }()), ": ", 3)[1]
	for _, args := range [][]string{
		{"dev", "set", dev, "name", "rdmstperm0"},
		{"link", "add", "rdmstperm1", "type", "rxe", "netdev", "lo"},
		{"system", "set", "netns", "exclusive"},
	} {
		cmd := exec.Command(setpriv, append([]string{"--bounding-set=-net_admin", "--inh-caps=-net_admin", os.Args[0]}, args...)...)
		cmd.Env = append(os.Environ(), "RDMASTACK_AS_RDMA=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("rdma %q without CAP_NET_ADMIN: %v, want exit status 1", args, err)
		}
		if msg := stderr.String(); !strings.Contains(msg, "operation not permitted") || strings.Count(msg, "\n") != 1 {
			t.Errorf("rdma %q without CAP_NET_ADMIN printed %q, want one line with EPERM's text", args, msg)
		}
	}
	if after, _ := ours(t, "-j", "-d", "dev"); after != before {
		t.Errorf("devices changed:\nbefore %s\nafter  %s", before, after)
	}
	if sys, _ := ours(t, "system"); !strings.Contains(sys, "netns shared") {
		t.Errorf("netns mode changed: %q", sys)
	}
}

// TestIntegrationSystemShow compares "rdma system [show]" with iproute2's
// text (system show never prints JSON, even with -j).
func TestIntegrationSystemShow(t *testing.T) {
	testenv.RequireRDMA(t)
	v := testenv.Iproute2Version(t, testenv.Oracle(t, "rdma"))
	for _, args := range [][]string{{"system"}, {"system", "show"}, {"-j", "system", "show"}, {"sys", "show", "netns"}} {
		want, wantOK := iproute2(t, args...)
		got, gotOK := ours(t, args...)
		if !wantOK || !gotOK {
			t.Fatalf("rdma %q: iproute2 ok=%v, ours ok=%v", args, wantOK, gotOK)
		}
		// Fields iproute2 learned later, named by the release that added them.
		if v[0]*100+v[1] < 607 { // privileged-qkey: 6.7 (commit 21180a7a)
			got = regexp.MustCompile(`privileged-qkey \S+ `).ReplaceAllString(got, "")
		}
		if v[0]*100+v[1] < 613 { // monitor: 6.13 (commit be24be74)
			got = regexp.MustCompile(`monitor \S+ `).ReplaceAllString(got, "")
		}
		if got != want {
			t.Errorf("rdma %q:\n got %q\nwant %q", args, got, want)
		}
	}
}
