// Package rxetest is what tests of the connection manager and its
// drop-ins share about the VM's Soft-RoCE devices. It is a package of its
// own, not part of internal/testenv, because it asks RDMA netlink and
// nldev's own tests use testenv.
package rxetest

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// Addr is the IPv4 address of the first RDMA device's netdev and the
// device's index: both ends of a test connect on it (one rxe device loops
// its own traffic; two in one network namespace do not reach each other).
func Addr(t testing.TB) (netip.Addr, uint32) {
	t.Helper()
	return netdevAddr(t, "IPv4", func(a netip.Addr) bool { return a.Is4() })
}

// Addr6 is Addr's IPv6 counterpart: a global (not link-local) IPv6
// address of the first RDMA device's netdev (the VM gives veth0
// fd77::1), and the device's index.
func Addr6(t testing.TB) (netip.Addr, uint32) {
	t.Helper()
	return netdevAddr(t, "global IPv6", func(a netip.Addr) bool { return a.Is6() && !a.Is4In6() && a.IsGlobalUnicast() })
}

// LinkLocal is the IPv6 link-local address of the first RDMA device's
// netdev, with the netdev's name as its zone ("fe80::…%veth0"), and the
// device's index.
func LinkLocal(t testing.TB) (netip.Addr, uint32) {
	t.Helper()
	return netdevAddr(t, "IPv6 link-local", func(a netip.Addr) bool { return a.Is6() && a.IsLinkLocalUnicast() })
}

// netdevAddr is the first address of the first RDMA device's netdev that
// is what ok wants (what), zoned with the netdev's name if link-local.
func netdevAddr(t testing.TB, what string, ok func(netip.Addr) bool) (netip.Addr, uint32) {
	t.Helper()
	devs := Devices(t)
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ports, err := c.Ports(devs[0].Index)
	if err != nil || len(ports) == 0 {
		t.Fatalf("ports of %s: %v", devs[0].Name, err)
	}
	ifi, err := net.InterfaceByIndex(int(ports[0].NetdevIndex))
	if err != nil {
		t.Fatalf("%s's netdev %d: %v", devs[0].Name, ports[0].NetdevIndex, err)
	}
	addrs, _ := ifi.Addrs()
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && ok(p.Addr()) {
			if p.Addr().IsLinkLocalUnicast() {
				return p.Addr().WithZone(ifi.Name), devs[0].Index
			}
			return p.Addr(), devs[0].Index
		}
	}
	testenv.Skip(t, "%s (%s) has no %s address", ifi.Name, devs[0].Name, what)
	return netip.Addr{}, 0
}

// Devices returns the kernel's RDMA devices (there must be one at least).
func Devices(t testing.TB) []nldev.Device {
	t.Helper()
	testenv.RequireRDMA(t)
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	devs, err := c.Devices()
	if err != nil || len(devs) == 0 {
		t.Fatalf("devices: %v %v", devs, err)
	}
	return devs
}

// ExclusiveNetns puts RDMA netlink's namespace mode in exclusive (restored
// at cleanup, when the kernel allows it again) and adds a network namespace
// called name (deleted at cleanup), which then sees no RDMA device. It
// returns the path of iproute2's ip, for `ip netns exec name ...`.
func ExclusiveNetns(t testing.TB, name string) (ip string) {
	t.Helper()
	testenv.RequireRDMA(t)
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() }) // after the restore below: cleanups run last-in first-out
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	// A namespace deleted by an earlier test counts until the kernel has
	// torn it down (cleanup_net runs later): wait out its EBUSY.
	testenv.Eventually(t, 10*time.Second, "exclusive mode", func(err error) bool { return errors.Is(err, unix.EBUSY) },
		func() error { return c.SetNetnsMode(nldev.NetnsExclusive) })
	t.Cleanup(func() {
		testenv.Eventually(t, 10*time.Second, "restore netns mode", func(err error) bool { return errors.Is(err, unix.EBUSY) },
			func() error { return c.SetNetnsMode(sys.NetnsMode) })
	})
	ip = testenv.Oracle(t, "ip")
	testenv.Run(t, ip, "netns", "add", name)
	t.Cleanup(func() { testenv.Run(t, ip, "netns", "del", name) })
	return ip
}

// NoLeaks registers a cleanup that runs after every cleanup registered
// later (the test's own): within 20 s the process's fds and goroutines,
// and, unless dev is nil, the kernel objects on device dev (RDMA netlink's
// resource summary: the cm_ids, QPs, CQs, PDs, MRs and the rest that
// `rdma resource` counts, other processes' included), must be back to what
// they were when NoLeaks was called, or the test fails naming what is
// left. What the process keeps open for good (device caches, event
// sockets) must be opened before the call.
func NoLeaks(t testing.TB, dev *uint32) {
	t.Helper()
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	count := func() (fds, goroutines int, objs map[nldev.ResourceType]uint64) {
		ents, _ := os.ReadDir("/proc/self/fd")
		objs = map[nldev.ResourceType]uint64{}
		if dev != nil {
			s, err := nl.ResourceSummaryOf(*dev)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("resource summary: %v", err)
			}
			for _, c := range s.Counts {
				objs[c.Type] = c.Count
			}
		}
		return len(ents), runtime.NumGoroutine(), objs
	}
	more := func(objs, than map[nldev.ResourceType]uint64) bool {
		for typ, n := range objs {
			if n > than[typ] {
				return true
			}
		}
		return false
	}
	f0, g0, o0 := count()
	t.Cleanup(func() {
		defer nl.Close()
		f, g, o := count()
		for deadline := time.Now().Add(20 * time.Second); f > f0 || g > g0 || more(o, o0); f, g, o = count() {
			if time.Now().After(deadline) {
				t.Fatalf("left behind: fds %d→%d (%s), goroutines %d→%d, kernel objects %v→%v", f0, f, fdNames(), g0, g, o0, o)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// fdNames lists the process's open fds and what they are.
func fdNames() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var names []string
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		names = append(names, e.Name()+"="+l)
	}
	return strings.Join(names, " ")
}

// Wire is testenv.Wire for a test of the devices: the wire, and the index
// of the device on it (the guest's first, rxe0), whose address must be the
// wire's.
func Wire(t testing.TB) (*testenv.WireEnv, uint32) {
	t.Helper()
	w := testenv.Wire(t)
	addr, dev := Addr(t)
	if addr != w.Self {
		t.Fatalf("the first device's address %v, the wire's %v", addr, w.Self)
	}
	return w, dev
}

// WireSIW is the wire of a test named SIW (testenv.WireSIW: siw0 alone on
// eth0 in both guests of the pair) and the index of this guest's siw
// device.
func WireSIW(t testing.TB) (*testenv.WireEnv, uint32) {
	t.Helper()
	w := testenv.WireSIW(t)
	return w, deviceIndex(t, w.SIWDev)
}

// SIW is the test's siw guest (testenv.SIW) and the index of its device
// in the root namespace, where servers listen; clients run in the peer
// namespace and dial SIWEnv.Addr.
func SIW(t testing.TB) (*testenv.SIWEnv, uint32) {
	t.Helper()
	e := testenv.SIW(t)
	return e, deviceIndex(t, e.Dev)
}

// deviceIndex is the RDMA netlink index of the device named name.
func deviceIndex(t testing.TB, name string) uint32 {
	t.Helper()
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	d, err := nl.DeviceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return d.Index
}
