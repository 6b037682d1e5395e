package device

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// ipLink runs `ip link ARGS` and deletes the device name at cleanup.
func ipLink(t *testing.T, name string, args ...string) {
	t.Helper()
	ip := testenv.Oracle(t, "ip")
	testenv.Run(t, ip, append([]string{"link"}, args...)...)
	t.Cleanup(func() { exec.Command(ip, "link", "del", name).Run() })
	testenv.Run(t, ip, "link", "set", name, "up")
}

// portOf returns the device and port whose netdev is netdev.
func portOf(t *testing.T, netdev string) (Device, Port) {
	t.Helper()
	snap, err := List()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.Devices {
		for _, p := range d.Ports {
			if p.Netdev == netdev {
				return d, p
			}
		}
	}
	t.Fatalf("no RDMA port on %s", netdev)
	return Device{}, Port{}
}

// checkPorts fails unless PortsOfNetdev(netdev) is exactly the port of
// d, found the way via says.
func checkPorts(t *testing.T, netdev string, d Device, port uint32, via Via) {
	t.Helper()
	snap, err := List()
	if err != nil {
		t.Fatal(err)
	}
	got, err := snap.PortsOfNetdev(netdev)
	if err != nil || len(got) != 1 || got[0].Device.Name != d.Name || got[0].Port.Number != port || got[0].Via != via {
		t.Errorf("PortsOfNetdev(%s) = %+v, %v; want %s/%d via %v", netdev, got, err, d.Name, port, via)
	}
}

// TestIntegrationPortsOfNetdevUppers stacks a VLAN and a macvlan (with an
// address, so that the GID table names it too) on veth0, and a bond on a
// dummy device carrying an rxe device of its own, with iproute2; each
// resolves to its rxe device and port through its lower link. A network
// device with no RDMA port behind it, and one that does not exist, are
// ErrUnknownNetdev.
func TestIntegrationPortsOfNetdevUppers(t *testing.T) {
	testenv.RequireRDMA(t)
	rxe0, p0 := portOf(t, "veth0")
	if rxe0.Name != "rxe0" {
		t.Fatalf("veth0 carries %s, want rxe0", rxe0.Name)
	}
	ipLink(t, "veth0.7", "add", "link", "veth0", "name", "veth0.7", "type", "vlan", "id", "7")
	checkPorts(t, "veth0.7", rxe0, p0.Number, ViaLower)
	ipLink(t, "rsmv0", "add", "link", "veth0", "name", "rsmv0", "type", "macvlan", "mode", "bridge")
	ip := testenv.Oracle(t, "ip")
	testenv.Run(t, ip, "addr", "add", "10.78.0.1/24", "dev", "rsmv0")
	checkPorts(t, "rsmv0", rxe0, p0.Number, ViaLower)
	// A VLAN on the VLAN: lower links are followed down.
	ipLink(t, "veth0.7.8", "add", "link", "veth0.7", "name", "veth0.7.8", "type", "vlan", "id", "8")
	checkPorts(t, "veth0.7.8", rxe0, p0.Number, ViaLower)

	// The bond's slave must go down to be enslaved: a dummy of its own,
	// with an rxe device of its own, leaves veth0 and its addresses alone.
	testenv.Dummy(t, "rsbdum0")
	rdma := testenv.Oracle(t, "rdma")
	testenv.Run(t, rdma, "link", "add", "rsbrxe0", "type", "rxe", "netdev", "rsbdum0")
	t.Cleanup(func() { exec.Command(rdma, "link", "del", "rsbrxe0").Run() })
	bdev, bport := portOf(t, "rsbdum0")
	if bdev.Name != "rsbrxe0" {
		t.Fatalf("rsbdum0 carries %s, want rsbrxe0", bdev.Name)
	}
	testenv.Run(t, ip, "link", "add", "rsbond0", "type", "bond", "mode", "active-backup")
	t.Cleanup(func() { exec.Command(ip, "link", "del", "rsbond0").Run() })
	testenv.Run(t, ip, "link", "set", "rsbdum0", "down")
	testenv.Run(t, ip, "link", "set", "rsbdum0", "master", "rsbond0")
	testenv.Run(t, ip, "link", "set", "rsbond0", "up")
	checkPorts(t, "rsbond0", bdev, bport.Number, ViaLower)

	snap, err := List()
	if err != nil {
		t.Fatal(err)
	}
	testenv.Dummy(t, "rsnordma0")
	for _, bad := range []string{"lo", "rsnordma0", "rsnosuch0"} {
		if got, err := snap.PortsOfNetdev(bad); !errors.Is(err, ErrUnknownNetdev) || got != nil {
			t.Errorf("PortsOfNetdev(%s) = %+v, %v; want ErrUnknownNetdev", bad, got, err)
		}
	}
}

// TestIntegrationCharDevices checks every char device List gives against
// /dev/infiniband: each node is there with the device number stat gives,
// and each node there is one of them.
func TestIntegrationCharDevices(t *testing.T) {
	testenv.RequireRDMA(t)
	snap, err := List()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, d := range snap.Devices {
		cds := snap.CharDevicesOf(d)
		if len(cds) == 0 || cds[0].Kind.String() != "uverbs" {
			t.Errorf("%s: char devices %+v, want uverbs first", d.Name, cds)
		}
		for _, c := range cds {
			listed[c.Path] = true
			var st unix.Stat_t
			if err := unix.Stat(c.Path, &st); err != nil {
				t.Errorf("%s: %s: %v", d.Name, c.Path, err)
				continue
			}
			if st.Mode&unix.S_IFMT != unix.S_IFCHR || unix.Major(st.Rdev) != c.Major || unix.Minor(st.Rdev) != c.Minor {
				t.Errorf("%s: %s is %d:%d (mode %o), listed %d:%d", d.Name, c.Path, unix.Major(st.Rdev), unix.Minor(st.Rdev), st.Mode, c.Major, c.Minor)
			}
			if k := c.Kind.String(); !(len(c.Name) > len(k) && c.Name[:len(k)] == k) && c.Name != k {
				t.Errorf("%s: %s listed as %s", d.Name, c.Name, k)
			}
		}
	}
	if len(snap.SystemCharDevices()) != 1 {
		t.Errorf("system char devices %+v, want rdma_cm", snap.SystemCharDevices())
	}
	nodes, err := filepath.Glob("/dev/infiniband/*")
	if err != nil || len(nodes) == 0 {
		t.Fatalf("/dev/infiniband: %v %v", nodes, err)
	}
	for _, n := range nodes {
		if !listed[n] {
			t.Errorf("%s is in /dev/infiniband but no device lists it (listed: %v)", n, listed)
		}
	}
}

// TestIntegrationPortCounters compares each port's hw counters with
// `rdma -j stat show link` between two reads (traffic of other tests may
// move them: a counter only grows), and with sysfs.
func TestIntegrationPortCounters(t *testing.T) {
	testenv.RequireRDMA(t)
	snap, err := List()
	if err != nil {
		t.Fatal(err)
	}
	rdma := testenv.Oracle(t, "rdma")
	for _, d := range snap.Devices {
		for _, p := range d.Ports {
			before, err := d.PortCounters(p.Number)
			if err != nil {
				t.Fatal(err)
			}
			out := testenv.Run(t, rdma, "-j", "stat", "show", "link", d.Name+"/"+itoa(int(p.Number)))
			time.Sleep(10 * time.Millisecond)
			after, err := d.PortCounters(p.Number)
			if err != nil {
				t.Fatal(err)
			}
			if len(before.HW) == 0 {
				t.Fatalf("%s/%d: no hw counters", d.Name, p.Number)
			}
			var links []map[string]any
			if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
				t.Fatalf("rdma -j stat show link: %v: %s", err, out)
			}
			theirs := map[string]float64{}
			flatten(links[0], theirs)
			for _, c := range before.HW {
				v, ok := theirs[c.Name]
				a, _ := after.HW.Get(c.Name)
				if !ok || v < float64(c.Value) || v > float64(a) {
					t.Errorf("%s/%d %s: sysfs %d then %d, rdma stat %v (%v)", d.Name, p.Number, c.Name, c.Value, a, v, ok)
				}
				dir := filepath.Join(d.SysfsPath, "ports", itoa(int(p.Number)), "hw_counters", c.Name)
				if _, err := os.Stat(dir); err != nil {
					t.Errorf("%s: %v", c.Name, err)
				}
			}
			for name := range theirs {
				if _, ok := before.HW.Get(name); !ok && !slices.Contains([]string{"ifindex", "port"}, name) {
					t.Errorf("%s/%d: rdma stat shows %s, PortCounters has not", d.Name, p.Number, name)
				}
			}
			if len(before.PMA) != 0 {
				t.Errorf("%s/%d: rxe has no PMA, yet PMA counters %+v", d.Name, p.Number, before.PMA)
			}
		}
	}
	if _, err := snap.Devices[0].PortCounters(99); !errors.Is(err, ErrUnknownPort) {
		t.Errorf("port 99: %v", err)
	}
}

// flatten collects the numbers of iproute2's JSON, nested or not (some
// versions group counters in a "counters" object).
func flatten(m map[string]any, out map[string]float64) {
	for k, v := range m {
		switch v := v.(type) {
		case float64:
			out[k] = v
		case map[string]any:
			flatten(v, out)
		}
	}
}
