package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// statIproute2Version is the oracle's version as major*100+minor.
func statIproute2Version(t *testing.T) int {
	v := testenv.Iproute2Version(t, testenv.Oracle(t, "rdma"))
	return v[0]*100 + v[1]
}

// statAdjust turns our output (iproute2 HEAD's format) into what the
// installed iproute2 prints, naming each known difference.
func statAdjust(t *testing.T, s string, pretty bool) string {
	v := statIproute2Version(t)
	if v < 607 && !pretty {
		// Before iproute2 6.7 (commit f962b24a, "make pretty behave like
		// other commands") counters and optional-counter names went on
		// the first line unless -p was given.
		s = strings.ReplaceAll(s, "\n    ", "")
	}
	if v < 615 {
		// The optional-counters part of the auto mode came with iproute2
		// 6.15 (commit a03f4053).
		s = strings.ReplaceAll(s, " on optional-counters off", " on")
	}
	return s
}

var statNumbers = regexp.MustCompile(`\b[0-9]+\b`)

// statDiffer compares one command's text and exit status with iproute2's;
// with counters, the numbers are left out (counters may move between the
// two reads: TestIntegrationStatShowJSON checks their values).
func statDiffer(t *testing.T, counters bool, args ...string) {
	t.Helper()
	want, wantOK := iproute2(t, args...)
	got, gotOK := ours(t, args...)
	if gotOK != wantOK {
		t.Errorf("rdma %q: ours succeeded=%v, iproute2 succeeded=%v", args, gotOK, wantOK)
		return
	}
	pretty := false
	for _, a := range args {
		pretty = pretty || a == "-p"
	}
	got = statAdjust(t, got, pretty)
	if counters {
		want, got = statNumbers.ReplaceAllString(want, "N"), statNumbers.ReplaceAllString(got, "N")
	}
	if got != want {
		t.Errorf("rdma %q:\n got %q\nwant %q", args, got, want)
	}
}

// statJSON runs both tools with -j and returns the parsed outputs.
func statJSON(t *testing.T, args ...string) (theirs, ours_ []map[string]any) {
	t.Helper()
	args = append([]string{"-j"}, args...)
	want, _ := iproute2(t, args...)
	got, _ := ours(t, args...)
	if err := json.Unmarshal([]byte(want), &theirs); err != nil {
		t.Fatalf("iproute2 %q: %v in %q", args, err, want)
	}
	if err := json.Unmarshal([]byte(got), &ours_); err != nil {
		t.Fatalf("ours %q: %v in %q", args, err, got)
	}
	return theirs, ours_
}

func statFirstDev(t *testing.T) string {
	t.Helper()
	out, _ := iproute2(t, "dev", "show")
	first := strings.SplitN(strings.TrimSpace(out), ": ", 3)
	if len(first) < 2 {
		t.Fatalf("iproute2 printed no device: %q", out)
	}
	return first[1]
}

// TestIntegrationStatShowText compares every "statistic show" form with
// iproute2's text.
func TestIntegrationStatShowText(t *testing.T) {
	testenv.RequireRDMA(t)
	dev := statFirstDev(t)
	for _, args := range [][]string{
		{"statistic"}, {"stat", "show"}, {"stat", "list"}, {"-p", "stat", "show"}, {"stat", "show", "link"},
		{"stat", "show", "link", dev + "/1"}, {"stat", "show", "link", dev}, {"-p", "stat", "show", "link", dev + "/1"},
		{"stat", "show", "link", dev + "/2"}, {"stat", "show", "link", dev + "/0"}, {"stat", "show", "link", "nosuch/1"},
	} {
		statDiffer(t, true, args...)
	}
}

// TestIntegrationStatShowJSON compares "rdma -j statistic show" with
// iproute2's: the same keys, and values that only grow from their read to
// ours.
func TestIntegrationStatShowJSON(t *testing.T) {
	testenv.RequireRDMA(t)
	dev := statFirstDev(t)
	for _, args := range [][]string{{"stat", "show"}, {"-p", "stat"}, {"stat", "show", "link", dev + "/1"}} {
		theirs, ours := statJSON(t, args...)
		if len(theirs) == 0 || len(theirs) != len(ours) {
			t.Fatalf("rdma -j %q: %d objects, iproute2 %d", args, len(ours), len(theirs))
		}
		for i := range theirs {
			if diff := cmp.Diff(keys(theirs[i]), keys(ours[i])); diff != "" {
				t.Errorf("rdma -j %q object %d keys (-iproute2 +ours):\n%s", args, i, diff)
			}
			for k, v := range theirs[i] {
				n, isNum := v.(float64)
				if k == "port" || !isNum {
					if ours[i][k] != v {
						t.Errorf("rdma -j %q: %s = %v, iproute2 %v", args, k, ours[i][k], v)
					}
					continue
				}
				if m, _ := ours[i][k].(float64); m < n {
					t.Errorf("rdma -j %q: counter %s went down from %v (iproute2) to %v", args, k, n, m)
				}
			}
		}
	}
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// statStartQP runs ibv_rc_pingpong as a server on dev, so that a QP and an
// MR exist; it returns the QP's number as iproute2 lists it.
func statStartQP(t *testing.T, dev string) string {
	t.Helper()
	return strconv.FormatUint(uint64(testenv.StartRCServer(t, dev, 1, 18516)), 10)
}

// TestIntegrationStatShows compares the other show commands (QP counters,
// MR statistics, counter modes, optional counters), text and JSON, while
// ibv_rc_pingpong holds a QP and an MR.
func TestIntegrationStatShows(t *testing.T) {
	testenv.RequireRDMA(t)
	dev := statFirstDev(t)
	statStartQP(t, dev)
	for _, args := range [][]string{
		{"stat", "show", "mr"}, {"stat", "mr", "mrn", "0-1000000"},
		{"stat", "qp"}, {"stat", "qp", "show", "link", dev + "/1", "lqpn", "17"},
		{"stat", "qp", "mode"}, {"stat", "qp", "mode", "link", dev}, {"stat", "qp", "mode", "link", dev + "/3"},
		{"stat", "qp", "set", "link", dev + "/1"}, {"stat", "mode"}, {"stat", "mode", "supported", "link", dev + "/1"},
	} {
		statDiffer(t, false, args...)
		theirs, ours := statJSON(t, args...)
		if diff := cmp.Diff(theirs, ours); diff != "" {
			t.Errorf("rdma -j %q (-iproute2 +ours):\n%s", args, diff)
		}
	}
	// The MR list is not empty: the comparison above saw ibv_rc_pingpong's MR.
	if out, _ := ours(t, "stat", "show", "mr"); !strings.HasPrefix(out, "dev "+dev+" mrn ") {
		t.Errorf("stat show mr printed %q, want the MR of ibv_rc_pingpong", out)
	}
}

// TestIntegrationStatQPSetBind sets the QP counter mode with our tool and
// reads it with iproute2's, and tries a manual bind, which rxe refuses.
func TestIntegrationStatQPSetBind(t *testing.T) {
	testenv.RequireRDMA(t)
	dev := statFirstDev(t)
	link := dev + "/1"
	before, _ := iproute2(t, "stat", "qp", "mode", "link", link)
	t.Cleanup(func() {
		if _, ok := ours(t, "stat", "qp", "set", "link", link, "auto", "off"); !ok {
			t.Error("could not turn auto mode off")
		}
		if after, _ := iproute2(t, "stat", "qp", "mode", "link", link); after != before {
			t.Errorf("mode not restored: %q, was %q", after, before)
		}
	})
	for _, tt := range []struct {
		args []string
		mode string // as iproute2 6.1 prints it
	}{
		{[]string{"auto", "type", "on"}, "qp auto type on"},
		{[]string{"auto", "type,pid", "on"}, "qp auto type,pid on"},
		{[]string{"auto", "off"}, "qp auto off"},
		{[]string{"auto", "pid", "on"}, "qp auto pid on"},
	} {
		if _, ok := ours(t, append([]string{"stat", "qp", "set", "link", link}, tt.args...)...); !ok {
			t.Fatalf("stat qp set %q failed", tt.args)
		}
		if got, _ := iproute2(t, "stat", "qp", "mode", "link", link); got != "link "+link+" mode "+tt.mode+" \n" {
			t.Errorf("after %q iproute2 says %q", tt.args, got)
		}
		statDiffer(t, false, "stat", "qp", "mode", "link", link)
	}
	// Bad input fails in both tools and changes nothing.
	for _, args := range [][]string{
		{"auto", "foo", "on"}, {"auto", "type"}, {"auto", "type", "maybe"},
	} {
		statDiffer(t, false, append([]string{"stat", "qp", "set", "link", link}, args...)...)
	}
	if got, _ := iproute2(t, "stat", "qp", "mode", "link", link); got != "link "+link+" mode qp auto pid on \n" {
		t.Errorf("bad input changed the mode: %q", got)
	}
	// Kernels before 6.15 lack the optional-counters setting: our tool says
	// so before sending anything.
	var out bytes.Buffer
	err := run(&out, []string{"stat", "qp", "set", "link", link, "auto", "type", "on", "optional-counters", "on"})
	if err == nil || !strings.Contains(err.Error(), "Linux 6.15") {
		t.Errorf("optional-counters on a kernel before 6.15: %v", err)
	}
	if _, ok := ours(t, "stat", "qp", "set", "link", link, "auto", "off"); !ok {
		t.Fatal("auto off failed")
	}

	lqpn := statStartQP(t, dev)
	err = run(&out, []string{"stat", "qp", "bind", "link", link, "lqpn", lqpn})
	if err == nil || !strings.Contains(err.Error(), "cannot allocate memory") {
		t.Errorf("bind on rxe: %v, want the kernel's ENOMEM", err)
	}
	for _, args := range [][]string{
		{"stat", "qp", "bind", "link", link, "lqpn", lqpn},
		{"stat", "qp", "bind", "link", link, "lqpn", lqpn, "cntn", "3"},
		{"stat", "qp", "unbind", "link", link, "cntn", "0", "lqpn", lqpn},
		{"stat", "qp", "unbind", "link", link, "cntn", "0"},
		{"stat", "qp", "bind", "link", dev, "lqpn", lqpn},
		{"stat", "qp", "bind", "link", dev + "/2", "lqpn", lqpn},
	} {
		statDiffer(t, false, args...)
	}
	statDiffer(t, false, "stat", "qp", "show")
}

// TestIntegrationStatOptionalCounters sets and unsets optional counters;
// rxe has none, so naming one fails and unsetting succeeds, in both tools.
func TestIntegrationStatOptionalCounters(t *testing.T) {
	testenv.RequireRDMA(t)
	dev := statFirstDev(t)
	for _, args := range [][]string{
		{"stat", "unset", "link", dev + "/1", "optional-counters"},
		{"stat", "set", "link", dev + "/1", "optional-counters", "sent_pkts"},
		{"stat", "set", "link", dev + "/1", "optional-counters", "nosuch"},
		{"stat", "set", "link", dev, "optional-counters", "nosuch"},
		{"stat", "unset", "link", dev + "/2", "optional-counters"},
	} {
		statDiffer(t, false, args...)
	}
	var out bytes.Buffer
	err := run(&out, []string{"stat", "set", "link", dev + "/1", "optional-counters", "sent_pkts"})
	if err == nil || !strings.Contains(err.Error(), `no optional counter "sent_pkts"`) {
		t.Errorf("enable a counter that is not optional: %v", err)
	}
	statDiffer(t, true, "stat", "show", "link", dev+"/1")
}
