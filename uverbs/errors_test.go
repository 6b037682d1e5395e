package uverbs

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

func errIs(err, target error) bool { return errors.Is(err, target) }

// fakeNetlink makes gone() see what answer says of the uverbs char device
// with index, and counts the questions.
func fakeNetlink(t *testing.T, answer func(index uint32) (nldev.Chardev, error)) *int {
	t.Helper()
	n := new(int)
	old := uverbsChardev
	uverbsChardev = func(index uint32) (nldev.Chardev, error) { *n++; return answer(index) }
	t.Cleanup(func() { uverbsChardev = old })
	return n
}

// TestErrDeviceRemoved checks both sides: a command's EIO matches
// ErrDeviceRemoved only when RDMA netlink no longer has the context's
// uverbs char device, through both choke points (ioctl and write()).
func TestErrDeviceRemoved(t *testing.T) {
	dev := Device{Name: "mlx5_0", Index: 2, DriverID: ib.DriverMLX5, Uverbs: "uverbs1"}
	live := func(uint32) (nldev.Chardev, error) { return nldev.Chardev{Name: "uverbs1"}, nil }
	for _, tc := range []struct {
		name    string
		errno   unix.Errno
		netlink func(uint32) (nldev.Chardev, error)
		removed bool
	}{
		{"EIO, device there", unix.EIO, live, false},
		{"EIO, no device with the index", unix.EIO, func(uint32) (nldev.Chardev, error) {
			return nldev.Chardev{}, &nldev.Error{Op: "get chardev", Err: fmt.Errorf("no such device: %w", os.ErrNotExist)}
		}, true},
		{"EIO, no uverbs client any more", unix.EIO, func(uint32) (nldev.Chardev, error) {
			return nldev.Chardev{}, &nldev.Error{Op: "get chardev", Err: unix.EOPNOTSUPP}
		}, true},
		{"EIO, index now another char device's", unix.EIO, func(uint32) (nldev.Chardev, error) {
			return nldev.Chardev{Name: "uverbs7"}, nil
		}, true},
		{"EIO, netlink cannot tell", unix.EIO, func(uint32) (nldev.Chardev, error) {
			return nldev.Chardev{}, &nldev.Error{Op: "dial", Err: unix.EPERM}
		}, false},
		{"ENODEV, device gone", unix.ENODEV, func(uint32) (nldev.Chardev, error) {
			return nldev.Chardev{}, &nldev.Error{Op: "get chardev", Err: unix.EOPNOTSUPP}
		}, true},
	} {
		for _, ioctl := range []bool{true, false} {
			asked := fakeNetlink(t, tc.netlink)
			k := &fakeKernel{onIoctl: func(*abi.Ioctl) error { return tc.errno }, onWrite: func(*abi.WriteCmd) error { return tc.errno }}
			c := &Context{dev: dev, k: k, ioctlOK: ioctl}
			_, err := c.QueryPort(1)
			if errIs(err, ErrDeviceRemoved) != tc.removed || !errIs(err, tc.errno) || *asked != 1 {
				t.Errorf("%s (ioctl %v): %v: ErrDeviceRemoved %v, want %v; %v %v; netlink asked %d times",
					tc.name, ioctl, err, errIs(err, ErrDeviceRemoved), tc.removed, tc.errno, errIs(err, tc.errno), *asked)
			}
		}
	}

	// Other errors do not ask, and do not match, even on a device that is
	// gone.
	asked := fakeNetlink(t, func(uint32) (nldev.Chardev, error) { return nldev.Chardev{}, os.ErrNotExist })
	c := &Context{dev: dev, k: &fakeKernel{onIoctl: func(*abi.Ioctl) error { return unix.EINVAL }}, ioctlOK: true}
	if _, err := c.QueryPort(1); errIs(err, ErrDeviceRemoved) || !errIs(err, unix.EINVAL) || *asked != 0 {
		t.Errorf("EINVAL: %v (netlink asked %d times)", err, *asked)
	}
	if err := wrap("mlx5_0", "x", unix.EIO); errIs(err, ErrDeviceRemoved) {
		t.Errorf("an EIO made without a context matches ErrDeviceRemoved: %v", err)
	}
}

// TestErrNotSupported: one sentinel, shared with nldev and ib, and the
// kernel's errnos for it.
func TestErrNotSupported(t *testing.T) {
	if ErrNotSupported != nldev.ErrNotSupported || ErrNotSupported != ib.ErrNotSupported {
		t.Fatal("uverbs, nldev and ib have different ErrNotSupported sentinels")
	}
	for _, errno := range []unix.Errno{unix.EOPNOTSUPP, unix.EPROTONOSUPPORT} {
		err := wrap("rxe0", "x", errno)
		if !errIs(err, ErrNotSupported) || !errIs(err, nldev.ErrNotSupported) || !errIs(err, errno) {
			t.Errorf("%v does not match ErrNotSupported (uverbs and nldev) and %v", err, errno)
		}
	}
	if errIs(wrap("rxe0", "x", unix.EINVAL), ErrNotSupported) {
		t.Error("EINVAL matches ErrNotSupported")
	}
}

// TestIntegrationUverbsRemovedMatch checks what rxe allows of the removal
// check: before its deletion an EIO on the device does not match
// ErrDeviceRemoved; once the kernel has taken the uverbs char device away
// (rxe deletion, which then waits for the open context) it does. rxe does
// not disassociate, so the kernel never answers EIO itself: commands keep
// working until the context closes, and that is checked too.
func TestIntegrationUverbsRemovedMatch(t *testing.T) {
	const name = "rxe_uvgone"
	nl := rxeOnDummy(t, "uvgone0", name)
	c, err := OpenName(name)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			c.Close()
		}
	})
	if err := c.wrapCmd("probe", unix.EIO); errIs(err, ErrDeviceRemoved) || !errIs(err, unix.EIO) {
		t.Fatalf("EIO on a live device: %v (ErrDeviceRemoved %v)", err, errIs(err, ErrDeviceRemoved))
	}
	done := make(chan error, 1)
	go func() { done <- nl.DeleteLink(c.dev.Index) }()
	testenv.WaitFor(t, name+"'s uverbs char device to go", c.dev.gone)
	if err := c.wrapCmd("probe", unix.EIO); !errIs(err, ErrDeviceRemoved) || !errIs(err, unix.EIO) {
		t.Fatalf("EIO once the device is gone: %v (ErrDeviceRemoved %v)", err, errIs(err, ErrDeviceRemoved))
	}
	if _, err := c.QueryDevice(); err != nil {
		t.Fatalf("QueryDevice while the removal waits: %v", err)
	}
	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	deleted(t, done)
}

// deleted waits for a DeleteLink that waited for the device's contexts
// to close: it must return within 10 s of the last one closing.
func deleted(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("DeleteLink: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("DeleteLink did not return 10s after the context closed")
	}
}

// rxeOnDummy adds an rxe device called name on a new dummy netdev, for a
// test that removes it, and returns the nldev client that added it.
func rxeOnDummy(t *testing.T, netdev, name string) *nldev.Client {
	t.Helper()
	devicesForTest(t)
	testenv.Dummy(t, netdev)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	if err := nl.AddLink(name, "rxe", netdev); err != nil {
		t.Fatal(err)
	}
	return nl
}
