package nldev

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationPortsMatchIproute2 compares every port with "rdma -j link".
func TestIntegrationPortsMatchIproute2(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var ours []map[string]any
	for _, d := range devs {
		ports, err := c.Ports(d.Index)
		if err != nil {
			t.Fatalf("Ports(%d): %v", d.Index, err)
		}
		if uint32(len(ports)) != d.Ports {
			t.Fatalf("%s: %d ports, GET said %d", d.Name, len(ports), d.Ports)
		}
		for _, p := range ports {
			one, err := c.Port(d.Index, p.Index)
			if err != nil {
				t.Fatalf("Port(%d, %d): %v", d.Index, p.Index, err)
			}
			if diff := cmp.Diff(p, one); diff != "" {
				t.Errorf("Port(%d, %d) differs from the dump:\n%s", d.Index, p.Index, diff)
			}
			if p.State != ib.PortActive || p.PhysState != ib.PhysLinkUp || p.IB != nil || p.Netdev == "" {
				t.Errorf("rxe port %+v: want ACTIVE, LINK_UP, a netdev and no IB attributes", p)
			}
			m := map[string]any{
				"ifindex": float64(p.DevIndex), "ifname": p.DevName, "port": float64(p.Index),
				"state": p.State.String(), "physical_state": p.PhysState.String(),
				"netdev": p.Netdev, "netdev_index": float64(p.NetdevIndex),
			}
			ours = append(ours, m)
		}
		if _, err := c.Port(d.Index, d.Ports+1); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Port(%d, %d) past the last port = %v, want os.ErrNotExist", d.Index, d.Ports+1, err)
		}
	}
	var theirs []map[string]any
	if err := json.Unmarshal(testenv.Run(t, testenv.Oracle(t, "rdma"), "-j", "link", "show"), &theirs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(theirs, ours); diff != "" {
		t.Fatalf("ports differ from iproute2 (-iproute2 +ours):\n%s", diff)
	}
}

// TestIntegrationAddDeleteLink creates an rxe device on a dummy netdev the
// test makes, checks it, deletes it, and checks bad input changes nothing.
func TestIntegrationAddDeleteLink(t *testing.T) {
	c := dialVM(t)
	ip := testenv.Oracle(t, "ip")
	const netdev, name = "rdmstdum0", "rxetest0"
	testenv.Run(t, ip, "link", "add", netdev, "type", "dummy")
	t.Cleanup(func() { exec.Command(ip, "link", "del", netdev).Run() })
	testenv.Run(t, ip, "link", "set", netdev, "up")

	before, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name, typ, netdev string
		want              error
	}{
		{name, "nosuch", netdev, unix.EINVAL},
		{name, "rxe", "nosuchnetdev0", os.ErrNotExist},
		{"bad%d", "rxe", netdev, unix.EINVAL},
		{"", "rxe", netdev, unix.EINVAL},
	} {
		if err := c.AddLink(bad.name, LinkType(bad.typ), bad.netdev); !errors.Is(err, bad.want) {
			t.Errorf("AddLink(%q, %q, %q) = %v, want %v", bad.name, bad.typ, bad.netdev, err, bad.want)
		}
	}
	if after, err := c.Devices(); err != nil || !cmp.Equal(before, after) {
		t.Fatalf("bad AddLink calls changed the devices: %v", err)
	}

	if err := c.AddLink(name, LinkRXE, netdev); err != nil {
		t.Fatalf("AddLink: %v", err)
	}
	d, err := c.DeviceByName(name)
	if err != nil {
		t.Fatalf("the new device is not listed: %v", err)
	}
	t.Cleanup(func() { c.DeleteLink(d.Index) })
	ports, err := c.Ports(d.Index)
	if err != nil || len(ports) != 1 || ports[0].Netdev != netdev {
		t.Fatalf("new device's ports = %+v, %v; want one on %s", ports, err, netdev)
	}
	if err := c.AddLink("rxetest1", LinkRXE, netdev); err == nil {
		t.Errorf("a second rxe device on %s was accepted", netdev)
		if d2, err := c.DeviceByName("rxetest1"); err == nil {
			c.DeleteLink(d2.Index)
		}
	}
	if err := c.DeleteLink(d.Index); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	if _, err := c.DeviceByName(name); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deleted device still listed: %v", err)
	}
	if after, err := c.Devices(); err != nil || !cmp.Equal(before, after) {
		t.Fatalf("devices after add+delete differ from before: %v", err)
	}
}

// TestIntegrationInventory: the batched inventory equals what the
// one-question-at-a-time methods say.
func TestIntegrationInventory(t *testing.T) {
	c := dialVM(t)
	inv, err := c.Inventory()
	if err != nil {
		t.Fatalf("Inventory: %v", err)
	}
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != len(devs) {
		t.Fatalf("inventory has %d devices, the dump %d", len(inv.Devices), len(devs))
	}
	for i, di := range inv.Devices {
		if diff := cmp.Diff(devs[i], di.Device); diff != "" {
			t.Errorf("device %d:\n%s", i, diff)
		}
		ports, err := c.Ports(di.Index)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ports, di.Ports); diff != "" {
			t.Errorf("%s ports:\n%s", di.Name, diff)
		}
		uv, err := c.UverbsChardev(di.Index)
		if err != nil || di.Uverbs == nil || *di.Uverbs != uv {
			t.Errorf("%s uverbs: inventory %+v, single %+v (%v)", di.Name, di.Uverbs, uv, err)
		}
		for p, umad := range di.Umad {
			ch, err := c.UmadChardev(di.Index, uint32(p+1))
			if (err == nil) != (umad != nil) || (umad != nil && *umad != ch) {
				t.Errorf("%s/%d umad: inventory %+v, single %+v (%v)", di.Name, p+1, umad, ch, err)
			}
			ch, err = c.IssmChardev(di.Index, uint32(p+1))
			if issm := di.Issm[p]; (err == nil) != (issm != nil) || (issm != nil && *issm != ch) {
				t.Errorf("%s/%d issm: inventory %+v, single %+v (%v)", di.Name, p+1, issm, ch, err)
			}
		}
	}
	cm, err := c.RdmaCMChardev()
	if err != nil || inv.RdmaCM == nil || *inv.RdmaCM != cm {
		t.Errorf("rdma_cm: inventory %+v, single %+v (%v)", inv.RdmaCM, cm, err)
	}
}
