package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func oracle(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	return testenv.Output(t, testenv.Oracle(t, "ibv_devinfo"), args...)
}

func ours(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	err := run(&out, args)
	return out.String(), err == nil
}

// TestIntegrationDevinfo compares our output with rdma-core's, line by
// line, for every device and port, verbose included (GIDs, capabilities,
// limits, port attributes).
func TestIntegrationDevinfo(t *testing.T) {
	testenv.RequireRDMA(t)
	list, _ := oracle(t, "-l")
	var first string
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, "\t") {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first == "" {
		t.Fatalf("ibv_devinfo -l lists no device: %q", list)
	}
	compareDevinfo(t, first)
}

// TestIntegrationSIWDevinfo compares them on the siw guest's iWARP devices
// (transport iWARP, no LID, GIDs from the MAC, no atomics).
func TestIntegrationSIWDevinfo(t *testing.T) {
	e := testenv.SIW(t)
	for _, dev := range []string{e.Dev, e.PeerDev} {
		if out, ok := oracle(t, "-d", dev, "-v"); !ok || !strings.Contains(out, "transport:\t\t\tiWARP (1)") {
			t.Fatalf("rdma-core's ibv_devinfo -d %s -v: ok=%v, no iWARP transport in %q", dev, ok, out)
		}
		compareDevinfo(t, dev)
	}
}

// compareDevinfo compares the outputs for all devices and for dev.
func compareDevinfo(t *testing.T, dev string) {
	t.Helper()
	for _, args := range [][]string{
		{}, {"-v"}, {"-l"}, {"--list"}, {"-d", dev}, {"-d", dev, "-v"}, {"-v", "-d", dev, "-i", "1"},
		{"--ib-dev=" + dev, "--ib-port=1"}, {"-d", "nosuchdev"}, {"-d", dev, "-i", "9"},
	} {
		want, wok := oracle(t, args...)
		got, gok := ours(t, args...)
		if wok != gok {
			t.Errorf("ibv_devinfo %q: rdma-core ok=%v, ours ok=%v", args, wok, gok)
		}
		if d := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); d != "" {
			t.Errorf("ibv_devinfo %q differs from rdma-core's (-rdma-core +ours):\n%s", args, d)
		}
	}
}
