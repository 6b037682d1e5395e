package device

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// netnsMode is the RDMA subsystem's netns mode now.
func netnsMode(t *testing.T) nldev.NetnsMode {
	t.Helper()
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	return sys.NetnsMode
}

// TestIntegrationNetNSExclusive lists, moves and returns devices with a
// second namespace in exclusive mode. rxe cannot move (no
// disassociate_ucontext), so every move is refused, typed, and nothing
// changes; a return from where the device is not, or from a namespace
// that is gone, is the no-op a CNI DEL needs.
func TestIntegrationNetNSExclusive(t *testing.T) {
	devs := rxetest.Devices(t)
	rxetest.NoLeaks(t, nil)
	rxetest.ExclusiveNetns(t, "rdmstmv0")
	ns := NetNSPath("rdmstmv0")
	d := devs[0]

	snap, err := ListNetNS(ns)
	if err != nil || len(snap.Devices) != 0 {
		t.Fatalf("ListNetNS(new namespace) = %d devices, %v; want none", len(snap.Devices), err)
	}
	here, err := ListNetNS(NetNSPath("/proc/self/ns/net"))
	if err != nil || len(here.Devices) != len(devs) {
		t.Fatalf("ListNetNS(own namespace) = %d devices, %v; want %d", len(here.Devices), err, len(devs))
	}
	if got, ok := here.ByName(d.Name); !ok || got.NodeGUID != d.NodeGUID || len(got.Ports) == 0 || got.Ports[0].Netdev == "" {
		t.Errorf("ListNetNS(own) has %s as %+v", d.Name, got)
	}
	f, err := os.Open("/run/netns/rdmstmv0")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if snap, err := ListNetNS(NetNSFD(int(f.Fd()))); err != nil || len(snap.Devices) != 0 {
		t.Errorf("ListNetNS(fd) = %v, %v", snap, err)
	}

	for name, err := range map[string]error{
		"by index": MoveToNetNS(d.Index, ns),
		"by GUID":  MoveToNetNSByGUID(d.NodeGUID, ns),
		"by fd":    MoveToNetNS(d.Index, NetNSFD(int(f.Fd()))),
	} {
		if !errors.Is(err, nldev.ErrDriverCannotMove) || !errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, nldev.ErrSharedMode) {
			t.Errorf("move %s = %v, want ErrDriverCannotMove", name, err)
		}
	}
	if err := MoveToNetNS(1<<30, ns); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("move of an unknown index = %v, want os.ErrNotExist", err)
	}
	if err := MoveToNetNSByGUID(ib.GUID{0xde, 0xad}, ns); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("move of an unknown GUID = %v, want os.ErrNotExist", err)
	}
	// Into the namespace it is in: nothing to do.
	if err := MoveToNetNS(d.Index, NetNSPath("/proc/self/ns/net")); err != nil {
		t.Errorf("move into its own namespace = %v, want nil", err)
	}
	for name, err := range map[string]error{
		"index, not there":    ReturnFromNetNS(d.Index, ns),
		"GUID, not there":     ReturnFromNetNSByGUID(d.NodeGUID, ns),
		"namespace gone":      ReturnFromNetNS(d.Index, NetNSPath("rdmst-gone")),
		"GUID namespace gone": ReturnFromNetNSByGUID(d.NodeGUID, NetNSPath("/run/netns/rdmst-gone")),
	} {
		if err != nil {
			t.Errorf("return %s = %v, want nil", name, err)
		}
	}
	loc, err := LocateNetNS(d.NodeGUID)
	if err != nil || !loc.Current || loc.Index != d.Index || loc.Name != d.Name {
		t.Errorf("LocateNetNS(%s) = %+v, %v; want the caller's, index %d", d.NodeGUID, loc, err, d.Index)
	}
	if _, err := LocateNetNS(ib.GUID{0xde, 0xad}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LocateNetNS(unknown) = %v, want os.ErrNotExist", err)
	}

	// A closed descriptor is refused, and changes nothing.
	g, err := os.Open("/run/netns/rdmstmv0")
	if err != nil {
		t.Fatal(err)
	}
	closed := int(g.Fd())
	g.Close()
	for name, err := range map[string]error{
		"move": MoveToNetNS(d.Index, NetNSFD(closed)), "return": ReturnFromNetNS(d.Index, NetNSFD(closed)),
		"list": second(ListNetNS(NetNSFD(closed))),
	} {
		if !errors.Is(err, unix.EBADF) {
			t.Errorf("%s with a closed fd = %v, want EBADF", name, err)
		}
	}
	after := rxetest.Devices(t)
	if len(after) != len(devs) || after[0].Name != d.Name {
		t.Errorf("devices changed: %v → %v", devs, after)
	}
	if netnsMode(t) != nldev.NetnsExclusive {
		t.Error("the mode changed")
	}
}

// TestIntegrationNetNSShared: in shared mode a move is refused before any
// request (ErrSharedMode), every namespace lists every device, and a
// return has nothing to do.
func TestIntegrationNetNSShared(t *testing.T) {
	devs := rxetest.Devices(t)
	if m := netnsMode(t); m != nldev.NetnsShared {
		t.Fatalf("the guest starts in %s mode, want shared", m)
	}
	rxetest.NoLeaks(t, nil)
	ip := testenv.Oracle(t, "ip")
	testenv.Run(t, ip, "netns", "add", "rdmstsh0")
	t.Cleanup(func() { exec.Command(ip, "netns", "del", "rdmstsh0").Run() })
	ns := NetNSPath("rdmstsh0")
	snap, err := ListNetNS(ns)
	if err != nil || len(snap.Devices) != len(devs) {
		t.Fatalf("shared mode: ListNetNS = %d devices, %v; want %d", len(snap.Devices), err, len(devs))
	}
	// The ports' netdevs are in the caller's namespace, not that one.
	for _, d := range snap.Devices {
		for _, p := range d.Ports {
			if p.Netdev != "" {
				t.Errorf("%s port %d: netdev %q seen from a namespace without it", d.Name, p.Number, p.Netdev)
			}
		}
	}
	for _, err := range []error{MoveToNetNS(devs[0].Index, ns), MoveToNetNSByGUID(devs[0].NodeGUID, ns)} {
		if !errors.Is(err, nldev.ErrSharedMode) || !errors.Is(err, unix.EOPNOTSUPP) {
			t.Errorf("move in shared mode = %v, want ErrSharedMode", err)
		}
	}
	if err := ReturnFromNetNS(devs[0].Index, ns); err != nil {
		t.Errorf("return in shared mode = %v, want nil", err)
	}
	if err := MoveToNetNS(1<<30, ns); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("move of an unknown device in shared mode = %v, want os.ErrNotExist", err)
	}
}

// TestIntegrationNetNSNoNetAdmin runs this test binary again without
// CAP_NET_ADMIN (setpriv): the move and the mode switch are refused with
// EPERM, typed, and nothing changes.
func TestIntegrationNetNSNoNetAdmin(t *testing.T) {
	if os.Getenv("RDMASTACK_NETNS_NOCAP") == "1" {
		noNetAdminChild(t)
		return
	}
	devs := rxetest.Devices(t)
	rxetest.ExclusiveNetns(t, "rdmstperm0")
	setpriv := testenv.Oracle(t, "setpriv")
	cmd := exec.Command(setpriv, "--bounding-set=-net_admin", "--inh-caps=-net_admin", os.Args[0],
		"-test.run=^TestIntegrationNetNSNoNetAdmin$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "RDMASTACK_NETNS_NOCAP=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("without CAP_NET_ADMIN: %v\n%s", err, out.String())
	}
	if !bytes.Contains(out.Bytes(), []byte("--- PASS: TestIntegrationNetNSNoNetAdmin")) {
		t.Fatalf("the child did not pass:\n%s", out.String())
	}
	if after := rxetest.Devices(t); len(after) != len(devs) {
		t.Errorf("devices changed: %d → %d", len(devs), len(after))
	}
	if m := netnsMode(t); m != nldev.NetnsExclusive {
		t.Errorf("mode %s after the refused switch, want exclusive", m)
	}
}

func noNetAdminChild(t *testing.T) {
	d := rxetest.Devices(t)[0]
	if err := MoveToNetNS(d.Index, NetNSPath("rdmstperm0")); !errors.Is(err, unix.EPERM) || !errors.Is(err, os.ErrPermission) {
		t.Errorf("move without CAP_NET_ADMIN = %v, want EPERM", err)
	}
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetNetnsMode(nldev.NetnsShared); !errors.Is(err, unix.EPERM) {
		t.Errorf("mode switch without CAP_NET_ADMIN = %v, want EPERM", err)
	}
	if _, err := ListNetNS(NetNSPath("rdmstperm0")); err != nil {
		t.Errorf("ListNetNS needs no privilege beyond opening the namespace: %v", err)
	}
}

// TestIntegrationVFGUIDNotSent: the guest's netdevs are not InfiniBand,
// so the VF GUID setters refuse before any request reaches the kernel, as
// the kernel's netlink tap (nlmon) shows.
func TestIntegrationVFGUIDNotSent(t *testing.T) {
	testenv.RequireRDMA(t)
	g := ib.GUID{0, 2, 0xc9, 3, 0, 0x21, 0x6e, 0x70}
	var errs []error
	msgs := testenv.CaptureNetlink(t, unix.NETLINK_ROUTE, func() {
		errs = append(errs, SetVFNodeGUID("veth0", 0, g), SetVFPortGUID("veth0", 0, g), SetVFGUIDs("veth0", 1, g, g))
		_, err := VFs("veth0")
		errs = append(errs, err)
	})
	for i, err := range errs {
		if !errors.Is(err, ErrNotInfiniBand) || !errors.Is(err, unix.EOPNOTSUPP) {
			t.Errorf("call %d on veth0 = %v, want ErrNotInfiniBand", i, err)
		}
	}
	getlink := false
	for _, m := range msgs {
		if m.Header.Flags&netlink.Request == 0 {
			continue
		}
		if m.Header.Type == unix.RTM_NEWLINK {
			t.Errorf("an RTM_NEWLINK request reached the kernel: %x", m.Data)
		}
		getlink = getlink || (m.Header.Type == unix.RTM_GETLINK && bytes.Contains(m.Data, []byte("veth0\x00")))
	}
	// The capture works: it saw the RTM_GETLINK each call asked first.
	if !getlink {
		t.Errorf("the capture holds no RTM_GETLINK for veth0 (%d messages): it sees nothing", len(msgs))
	}
}
