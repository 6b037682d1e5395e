package nldev

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationChardevs checks every char device nldev reports against
// the device nodes and sysfs.
func TestIntegrationChardevs(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		ch, err := c.UverbsChardev(d.Index)
		if err != nil {
			t.Fatalf("UverbsChardev(%s): %v", d.Name, err)
		}
		if !ch.HasDriverID || ch.DriverID != ib.DriverRXE || !strings.HasPrefix(ch.Name, "uverbs") {
			t.Errorf("%s: uverbs char device %+v: want driver rxe", d.Name, ch)
		}
		// The ABI is the driver's uverbs ABI (rxe: 2), as sysfs shows it.
		abi, err := os.ReadFile(filepath.Join("/sys/class/infiniband_verbs", ch.Name, "abi_version"))
		if err != nil || strings.TrimSpace(string(abi)) != itoa(int(ch.ABI)) {
			t.Errorf("%s: sysfs abi_version %q (%v), nldev says %d", ch.Name, abi, err, ch.ABI)
		}
		checkNode(t, ch)
		ibdev, err := os.ReadFile(filepath.Join("/sys/class/infiniband_verbs", ch.Name, "ibdev"))
		if err != nil || strings.TrimSpace(string(ibdev)) != d.Name {
			t.Errorf("sysfs says %s belongs to %q (%v), nldev says %s", ch.Name, ibdev, err, d.Name)
		}
		// RoCE ports have no MAD interface; the kernel says so or gives
		// the node sysfs also lists.
		for _, get := range []func(uint32, uint32) (Chardev, error){c.UmadChardev, c.IssmChardev} {
			ch, err := get(d.Index, 1)
			if err != nil {
				if !errors.Is(err, unix.EOPNOTSUPP) {
					t.Errorf("%s port 1: %v, want a char device or EOPNOTSUPP", d.Name, err)
				}
				continue
			}
			checkNode(t, ch)
			ibdev, err := os.ReadFile(filepath.Join("/sys/class/infiniband_mad", ch.Name, "ibdev"))
			if err != nil || strings.TrimSpace(string(ibdev)) != d.Name {
				t.Errorf("sysfs says %s belongs to %q (%v), nldev says %s", ch.Name, ibdev, err, d.Name)
			}
			if _, err := get(d.Index, 0); !errors.Is(err, unix.EINVAL) {
				t.Errorf("port 0: %v, want EINVAL", err)
			}
			if _, err := get(d.Index, d.Ports+1); !errors.Is(err, unix.EINVAL) {
				t.Errorf("port %d: %v, want EINVAL", d.Ports+1, err)
			}
		}
	}
	cm, err := c.RdmaCMChardev()
	if err != nil {
		t.Fatalf("RdmaCMChardev: %v", err)
	}
	if cm.Name != "rdma_cm" || cm.HasDriverID {
		t.Errorf("rdma_cm char device %+v", cm)
	}
	checkNode(t, cm)
	if _, err := c.UverbsChardev(1 << 30); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("UverbsChardev of an unknown device = %v, want os.ErrNotExist", err)
	}
}

// checkNode checks that the char device's node exists with its dev_t.
func checkNode(t *testing.T, ch Chardev) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(ch.Path(), &st); err != nil {
		t.Errorf("%s: %v", ch.Path(), err)
		return
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != ch.Dev {
		t.Errorf("%s: mode %o rdev %d:%d, nldev says %d:%d", ch.Path(), st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), unix.Major(ch.Dev), unix.Minor(ch.Dev))
	}
}

// TestIntegrationSystem reads the settings, compares them with iproute2,
// toggles the netns mode and restores it.
func TestIntegrationSystem(t *testing.T) {
	c := dialVM(t)
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	out := string(testenv.Run(t, testenv.Oracle(t, "rdma"), "system", "show"))
	if !strings.Contains(out, "netns "+sys.NetnsMode.String()) {
		t.Errorf("iproute2 says %q, we say netns %s", out, sys.NetnsMode)
	}
	if sys.CopyOnFork == nil || !strings.Contains(out, "copy-on-fork "+onOff(*sys.CopyOnFork)) {
		t.Errorf("iproute2 says %q, we say copy-on-fork %v", out, sys.CopyOnFork)
	}
	// A kernel from the release that brought a setting must report it;
	// older ones may have it backported (Debian's 6.1 has privileged-qkey).
	major, minor := kernelVersion(t)
	v := major*100 + minor
	if (v >= 607 && sys.PrivilegedQKey == nil) || (v >= 612 && sys.Monitor == nil) {
		t.Errorf("kernel %d.%d lacks a setting of its release: privileged-qkey %v monitor %v", major, minor, sys.PrivilegedQKey, sys.Monitor)
	}

	orig := sys.NetnsMode
	t.Cleanup(func() { c.SetNetnsMode(orig) })
	other := NetnsExclusive
	if orig == NetnsExclusive {
		other = NetnsShared
	}
	if err := c.SetNetnsMode(other); err != nil {
		t.Fatalf("SetNetnsMode(%s): %v", other, err)
	}
	if sys, err := c.System(); err != nil || sys.NetnsMode != other {
		t.Fatalf("after SetNetnsMode(%s): %+v, %v", other, sys, err)
	}
	if err := c.SetNetnsMode(orig); err != nil {
		t.Fatalf("restore netns mode: %v", err)
	}
	if err := c.SetNetnsMode(7); !errors.Is(err, unix.EINVAL) {
		t.Errorf("SetNetnsMode(7) = %v, want EINVAL", err)
	}

	if sys.PrivilegedQKey == nil {
		err := c.SetPrivilegedQKey(true)
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 6.7") {
			t.Errorf("SetPrivilegedQKey on %d.%d = %v, want ErrNotSupported naming 6.7", major, minor, err)
		}
		return
	}
	was := *sys.PrivilegedQKey
	t.Cleanup(func() { c.SetPrivilegedQKey(was) })
	if err := c.SetPrivilegedQKey(!was); err != nil {
		t.Fatalf("SetPrivilegedQKey(%v): %v", !was, err)
	}
	if now, err := c.System(); err != nil || now.PrivilegedQKey == nil || *now.PrivilegedQKey == was {
		t.Fatalf("privileged-qkey did not change: %+v, %v", now, err)
	}
	if err := c.SetPrivilegedQKey(was); err != nil {
		t.Fatalf("restore privileged-qkey: %v", err)
	}
}

// TestIntegrationRenameAndNetns renames a device and back, moves one into a
// network namespace the test creates and back, and checks bad input.
func TestIntegrationRenameAndNetns(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	d := devs[len(devs)-1]
	if err := c.Rename(d.Index, "rdmstren0"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	t.Cleanup(func() { c.Rename(d.Index, d.Name) })
	if got, err := c.Device(d.Index); err != nil || got.Name != "rdmstren0" {
		t.Fatalf("after rename: %+v, %v", got, err)
	}
	if err := c.Rename(d.Index, devs[0].Name); len(devs) > 1 && !errors.Is(err, unix.EEXIST) {
		t.Errorf("rename onto an existing name = %v, want EEXIST", err)
	}
	if err := c.Rename(d.Index, d.Name); err != nil {
		t.Fatalf("rename back: %v", err)
	}
	for _, bad := range []string{"", "a%d", strings.Repeat("x", 64)} {
		if err := c.Rename(d.Index, bad); !errors.Is(err, unix.EINVAL) {
			t.Errorf("Rename(%q) = %v, want EINVAL", bad, err)
		}
	}
	if err := c.Rename(1<<30, "rdmstren1"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Rename of an unknown device = %v, want os.ErrNotExist", err)
	}
	if err := c.SetNetns(d.Index, "rdmst-no-such-ns"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SetNetns to a missing namespace = %v, want os.ErrNotExist", err)
	}

	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { setNetnsModeEventually(t, c, sys.NetnsMode) })
	ip := testenv.Oracle(t, "ip")

	// In exclusive mode a new namespace sees no device (the mode must be
	// set before the namespace exists, or the kernel answers EBUSY) ...
	if err := c.SetNetnsMode(NetnsExclusive); err != nil {
		t.Fatalf("exclusive mode: %v", err)
	}
	inNS := dialNewNetns(t, ip, "rdmstns0")
	if there, err := inNS.Devices(); err != nil || len(there) != 0 {
		t.Errorf("exclusive mode: a new namespace sees %d devices (%v), want none", len(there), err)
	}
	// ... and a device moves only if its driver can disassociate user
	// contexts: rxe cannot, and the kernel says EOPNOTSUPP, changing nothing.
	err = c.SetNetns(d.Index, "rdmstns0")
	if !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("SetNetns of an rxe device = %v, want EOPNOTSUPP", err)
	}
	if _, err := c.DeviceByName(d.Name); err != nil {
		t.Fatalf("after the refused move the device is gone here: %v", err)
	}
	if there, err := inNS.Devices(); err != nil || len(there) != 0 {
		t.Errorf("after the refused move the namespace sees %d devices (%v)", len(there), err)
	}
	inNS.Close()
	testenv.Run(t, ip, "netns", "del", "rdmstns0")

	// In shared mode every namespace sees every device.
	setNetnsModeEventually(t, c, NetnsShared)
	inNS = dialNewNetns(t, ip, "rdmstns1")
	if there, err := inNS.Devices(); err != nil || len(there) != len(devs) {
		t.Errorf("shared mode: a new namespace sees %d devices (%v), want %d", len(there), err, len(devs))
	}
}

// setNetnsModeEventually sets the mode, waiting out the EBUSY the kernel
// answers while a deleted network namespace is still being torn down.
func setNetnsModeEventually(t *testing.T, c *Client, m NetnsMode) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "set netns mode "+m.String(),
		func(err error) bool { return errors.Is(err, unix.EBUSY) },
		func() error { return c.SetNetnsMode(m) })
}

// dialNewNetns creates a network namespace with iproute2 and dials RDMA
// netlink inside it; cleanup deletes it.
func dialNewNetns(t *testing.T, ip, ns string) *Client {
	t.Helper()
	testenv.Run(t, ip, "netns", "add", ns)
	t.Cleanup(func() { exec.Command(ip, "netns", "del", ns).Run() })
	f, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := DialNetNS(int(f.Fd()))
	if err != nil {
		t.Fatalf("DialNetNS(%s): %v", ns, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// kernelVersion is the running kernel's major and minor number.
func kernelVersion(t *testing.T) (int, int) {
	t.Helper()
	var major, minor int
	rel := testenv.KernelRelease()
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		t.Fatalf("kernel release %q", rel)
	}
	for _, c := range parts[0] {
		major = major*10 + int(c-'0')
	}
	for _, c := range parts[1] {
		if c < '0' || c > '9' {
			break
		}
		minor = minor*10 + int(c-'0')
	}
	return major, minor
}
