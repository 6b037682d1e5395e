package device

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationVerbsGeneration: devcache.Global.Verbs, what package rdma builds
// on, keeps its generation while nothing changes (List included), gives a
// new one with the devices at once when a device is added or deleted, and
// always lists List's devices.
func TestIntegrationVerbsGeneration(t *testing.T) {
	testenv.RequireRDMA(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	matchesList := func(when string, devs []uverbs.Device) {
		t.Helper()
		snap, err := List()
		if err != nil {
			t.Fatal(err)
		}
		var want []uverbs.Device
		for _, d := range snap.Devices {
			want = append(want, d.Device)
		}
		if diff := cmp.Diff(want, devs); diff != "" {
			t.Fatalf("%s: devcache.Global.Verbs differs from List (-List +Verbs):\n%s", when, diff)
		}
	}
	unchanged := func(when string, gen uint64) {
		t.Helper()
		if g, devs, err := devcache.Global.Verbs(gen); err != nil || g != gen || devs != nil {
			t.Fatalf("%s: Verbs(%d) = %d, %d devices, %v; want the same generation, no devices", when, gen, g, len(devs), err)
		}
	}
	changed := func(when string, since uint64) uint64 {
		t.Helper()
		g, devs, err := devcache.Global.Verbs(since)
		if err != nil || g <= since {
			t.Fatalf("%s: Verbs(%d) = generation %d, %v; want a later one", when, since, g, err)
		}
		matchesList(when, devs)
		return g
	}

	gen := changed("first", 0)
	unchanged("again", gen)
	if _, err := List(); err != nil {
		t.Fatal(err)
	}
	unchanged("after List", gen)

	testenv.Dummy(t, "rdmstgen0")
	if err := nl.AddLink("rxegen0", nldev.LinkRXE, "rdmstgen0"); err != nil {
		t.Fatal(err)
	}
	dev, err := nl.DeviceByName("rxegen0")
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			nl.DeleteLink(dev.Index)
		}
	})
	gen = changed("after rdma link add", gen)
	unchanged("again after rdma link add", gen)
	if err := nl.DeleteLink(dev.Index); err != nil {
		t.Fatal(err)
	}
	deleted = true
	gen = changed("after rdma link delete", gen)
	unchanged("again after rdma link delete", gen)
}
