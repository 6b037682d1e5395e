package nldev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// openNetNS opens the test's own network namespace, a valid nsfd.
func openNetNS(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// wantSetNetns is RDMA_NLDEV_CMD_SET's payload as iproute2's "rdma dev set
// DEV netns NAME" builds it (rdma/dev.c): the device index, then the fd.
func wantSetNetns(dev, fd uint32) []byte {
	var b []byte
	for _, a := range [][2]uint32{{nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev}, {nlabi.RDMA_NLDEV_NET_NS_FD, fd}} {
		b = binary.NativeEndian.AppendUint16(b, 8)
		b = binary.NativeEndian.AppendUint16(b, uint16(a[0]))
		b = binary.NativeEndian.AppendUint32(b, a[1])
	}
	return b
}

// systemReply is SYS_GET's answer with the netns mode m.
func systemReply(m NetnsMode) []netlink.Message {
	ae := netlink.NewAttributeEncoder()
	ae.Uint8(nlabi.RDMA_NLDEV_SYS_ATTR_NETNS_MODE, uint8(m))
	b, _ := ae.Encode()
	return []netlink.Message{{Header: netlink.Header{Type: netlink.HeaderType(nlabi.RDMA_NL_NLDEV<<10 | nlabi.RDMA_NLDEV_CMD_SYS_GET)}, Data: b}}
}

func TestSetNetnsFDRequest(t *testing.T) {
	ns := openNetNS(t)
	fd := uint32(ns.Fd())
	var got []netlink.Message
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		got = append(got, req)
		return nil, 0
	})
	if err := c.SetNetnsFD(3, int(fd)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	h := got[0].Header
	if h.Type != netlink.HeaderType(nlabi.RDMA_NL_NLDEV<<10|nlabi.RDMA_NLDEV_CMD_SET) || h.Flags != netlink.Request|netlink.Acknowledge {
		t.Errorf("header %+v, want type SET (5122) flags request|ack", h)
	}
	if want := wantSetNetns(3, fd); !bytes.Equal(got[0].Data, want) {
		t.Errorf("payload\n%x, want\n%x", got[0].Data, want)
	}
}

func TestSetNetnsFDRefusals(t *testing.T) {
	ns := openNetNS(t)
	for _, tc := range []struct {
		name  string
		mode  NetnsMode
		errno unix.Errno
		want  []error
	}{
		{"shared", NetnsShared, unix.EOPNOTSUPP, []error{ErrSharedMode, unix.EOPNOTSUPP}},
		{"driver", NetnsExclusive, unix.EOPNOTSUPP, []error{ErrDriverCannotMove, ErrNotSupported, unix.EOPNOTSUPP}},
		{"busy", NetnsExclusive, unix.EBUSY, []error{ErrBusy, unix.EBUSY}},
		{"gone", NetnsExclusive, unix.ENODEV, []error{os.ErrNotExist, unix.ENODEV}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
				if nlabi.GetOp(uint16(req.Header.Type)) == nlabi.RDMA_NLDEV_CMD_SYS_GET {
					return systemReply(tc.mode), 0
				}
				return nil, tc.errno
			})
			err := c.SetNetnsFD(1, int(ns.Fd()))
			var ne *Error
			if !errors.As(err, &ne) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("%v does not match %v", err, w)
				}
			}
			if tc.name != "shared" && errors.Is(err, ErrSharedMode) {
				t.Errorf("%v matches ErrSharedMode", err)
			}
		})
	}
}

// TestSetNetnsFDBadFD: a closed fd and a file that is no namespace are
// refused before anything reaches the kernel.
func TestSetNetnsFDBadFD(t *testing.T) {
	sent := 0
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) { sent++; return nil, 0 })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	closed := int(r.Fd())
	r.Close()
	for _, tc := range []struct {
		fd   int
		want []error
	}{
		{-1, []error{unix.EBADF}},
		{closed, []error{unix.EBADF}},
		{int(w.Fd()), []error{ErrNotNetNS, unix.EINVAL}},
	} {
		err := c.SetNetnsFD(1, tc.fd)
		for _, want := range tc.want {
			if !errors.Is(err, want) {
				t.Errorf("SetNetnsFD(fd %d) = %v, want %v", tc.fd, err, want)
			}
		}
		if _, err := DialNetNS(tc.fd); !errors.Is(err, tc.want[0]) {
			t.Errorf("DialNetNS(fd %d) = %v, want %v", tc.fd, err, tc.want[0])
		}
	}
	if sent != 0 {
		t.Errorf("%d requests sent for bad descriptors", sent)
	}
}

func TestSetNetnsModeBusy(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		if nlabi.GetOp(uint16(req.Header.Type)) != nlabi.RDMA_NLDEV_CMD_SYS_SET {
			t.Errorf("unexpected request %+v", req.Header)
		}
		return nil, unix.EBUSY
	})
	err := c.SetNetnsMode(NetnsExclusive)
	if !errors.Is(err, ErrBusy) || !errors.Is(err, unix.EBUSY) {
		t.Errorf("SetNetnsMode under EBUSY = %v, want ErrBusy and EBUSY", err)
	}
}
