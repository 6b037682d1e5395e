package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationDevices compares our ibv_devices with rdma-core's.
func TestIntegrationDevices(t *testing.T) {
	testenv.RequireRDMA(t)
	compareDevices(t)
}

// TestIntegrationSIWDevices compares them on the siw guest's iWARP devices.
func TestIntegrationSIWDevices(t *testing.T) {
	e := testenv.SIW(t)
	out := string(testenv.Run(t, testenv.Oracle(t, "ibv_devices")))
	for _, dev := range []string{e.Dev, e.PeerDev} {
		if !strings.Contains(out, dev) {
			t.Fatalf("rdma-core's ibv_devices does not list %s: %q", dev, out)
		}
	}
	compareDevices(t)
}

func compareDevices(t *testing.T) {
	t.Helper()
	want := string(testenv.Run(t, testenv.Oracle(t, "ibv_devices")))
	var out bytes.Buffer
	if err := run(&out, nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, out.String()); d != "" {
		t.Errorf("ibv_devices differs from rdma-core's (-rdma-core +ours):\n%s", d)
	}
}
