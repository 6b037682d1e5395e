package nldev

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// setRequests picks the RDMA_NLDEV_CMD_SET requests out of a capture.
func setRequests(msgs []netlink.Message) []netlink.Message {
	var out []netlink.Message
	for _, m := range msgs {
		if uint16(m.Header.Type) == nlabi.RDMA_NL_NLDEV<<10|nlabi.RDMA_NLDEV_CMD_SET && m.Header.Flags&netlink.Request != 0 {
			out = append(out, m)
		}
	}
	return out
}

// withoutFD zeroes the NET_NS_FD value of a SET payload: the descriptor's
// number is the sending process's own.
func withoutFD(t *testing.T, b []byte) []byte {
	t.Helper()
	out := bytes.Clone(b)
	for off := 0; off+4 <= len(out); {
		l := int(binary.NativeEndian.Uint16(out[off:]))
		typ := binary.NativeEndian.Uint16(out[off+2:]) & 0x3fff
		if l < 4 || off+l > len(out) {
			t.Fatalf("bad attribute at %d in %x", off, b)
		}
		if typ == nlabi.RDMA_NLDEV_NET_NS_FD && l == 8 {
			binary.NativeEndian.PutUint32(out[off+4:], 0)
		}
		off += (l + 3) &^ 3
	}
	return out
}

// TestIntegrationSetNetnsMatchesIproute2 reads the request "rdma dev set
// DEV netns NS" sends (strace) and ours, and compares them byte for byte
// (but for the descriptor's number); rxe cannot move, so the kernel
// refuses both, ours typed.
// Then the mode switch is refused while the namespace exists.
func TestIntegrationSetNetnsMatchesIproute2(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	d := devs[0]
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { setNetnsModeEventually(t, c, sys.NetnsMode) })
	if err := c.SetNetnsMode(NetnsExclusive); err != nil {
		t.Fatalf("exclusive mode: %v", err)
	}
	ip, rdma := testenv.Oracle(t, "ip"), testenv.Oracle(t, "rdma")
	inNS := dialNewNetns(t, ip, "rdmstcap0")

	// The kernel's netlink tap leaves NETLINK_RDMA out (netlink_filter_tap),
	// so nlmon sees nothing of it: iproute2's request is read with strace,
	// ours from a fake connection; then both go to the kernel.
	theirs, theirStderr, theirsOK := testenv.StraceNetlink(t, rdma, "dev", "set", d.Name, "netns", "rdmstcap0")
	f, err := os.Open("/run/netns/rdmstcap0")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ours []netlink.Message
	fake := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		ours = append(ours, req)
		return nil, 0
	})
	if err := fake.SetNetnsFD(d.Index, int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	tr, or := setRequests(theirs), setRequests(ours)
	if len(tr) != 1 || len(or) != 1 {
		t.Fatalf("captured %d SET requests from iproute2 and %d from us, want 1 each", len(tr), len(or))
	}
	if tr[0].Header.Flags != or[0].Header.Flags {
		t.Errorf("flags: iproute2 %#x, ours %#x", tr[0].Header.Flags, or[0].Header.Flags)
	}
	if a, b := withoutFD(t, tr[0].Data), withoutFD(t, or[0].Data); !bytes.Equal(a, b) {
		t.Errorf("payload (fd zeroed): iproute2\n%x, ours\n%x", a, b)
	}
	if want := wantSetNetns(d.Index, uint32(f.Fd())); !bytes.Equal(or[0].Data, want) {
		t.Errorf("our payload %x, want %x", or[0].Data, want)
	}
	ourErr := c.SetNetnsFD(d.Index, int(f.Fd()))
	if theirsOK || !strings.Contains(theirStderr, "Operation not supported") {
		t.Errorf("iproute2 moving an rxe device: exit 0 %v, stderr %q; want EOPNOTSUPP", theirsOK, theirStderr)
	}
	if !errors.Is(ourErr, ErrDriverCannotMove) || !errors.Is(ourErr, unix.EOPNOTSUPP) || errors.Is(ourErr, ErrSharedMode) {
		t.Errorf("SetNetnsFD of rxe in exclusive mode = %v, want ErrDriverCannotMove", ourErr)
	}
	if there, err := inNS.Devices(); err != nil || len(there) != 0 {
		t.Errorf("after the refused moves the namespace sees %d devices (%v)", len(there), err)
	}

	// The mode cannot change while the namespace exists; asking for the
	// mode in force is no change and succeeds.
	if err := c.SetNetnsMode(NetnsShared); !errors.Is(err, ErrBusy) || !errors.Is(err, unix.EBUSY) {
		t.Errorf("SetNetnsMode(shared) with another namespace = %v, want ErrBusy", err)
	}
	if _, ok := testenv.Output(t, rdma, "system", "set", "netns", "shared"); ok {
		t.Error("iproute2 switched the mode with another namespace present")
	}
	if now, err := c.System(); err != nil || now.NetnsMode != NetnsExclusive {
		t.Errorf("after the refused switch: %+v, %v; want exclusive", now, err)
	}
	if err := c.SetNetnsMode(NetnsExclusive); err != nil {
		t.Errorf("SetNetnsMode(exclusive) in exclusive mode = %v, want nil", err)
	}
}

// TestIntegrationMonitorNetNS opens a monitor inside another namespace
// (Linux 6.12), and refuses a closed descriptor.
func TestIntegrationMonitorNetNS(t *testing.T) {
	c := dialVM(t)
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	m, err := DialMonitorNetNS(int(f.Fd()))
	if sys.Monitor == nil {
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("DialMonitorNetNS on a kernel without monitoring = %v, want ErrNotSupported", err)
		}
	} else {
		if err != nil {
			t.Fatalf("DialMonitorNetNS: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := m.Receive(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Receive with nothing happening = %v, want the deadline", err)
		}
		m.Close()
	}
	fd := int(f.Fd())
	f.Close()
	if _, err := DialMonitorNetNS(fd); !errors.Is(err, unix.EBADF) {
		t.Errorf("DialMonitorNetNS(closed fd) = %v, want EBADF", err)
	}
}
