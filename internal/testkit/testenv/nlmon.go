package testenv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

var nlmonSeq atomic.Uint32

// CaptureNetlink records the netlink messages of protocol proto
// (unix.NETLINK_RDMA, unix.NETLINK_ROUTE, ...) that cross the kernel,
// either way, while fn runs: it creates an nlmon device (the kernel's
// netlink tap; module nlmon), reads its packets from an AF_PACKET socket
// and deletes it at once. Each packet is one datagram, split here into its
// messages. For comparing the requests iproute2 sends with ours. The
// kernel taps only some protocols (netlink_filter_tap: route, generic,
// netfilter, xfrm, sock_diag, ... but not NETLINK_RDMA): see StraceNetlink.
// Trust the headers more than the payloads: in the guest, a request the
// kernel refused was read back with its payload overwritten by the
// acknowledgement. StraceNetlink is the oracle for bytes.
func CaptureNetlink(t testing.TB, proto int, fn func()) []netlink.Message {
	t.Helper()
	ip := Oracle(t, "ip")
	name := fmt.Sprintf("rdmstmon%d", nlmonSeq.Add(1))
	Run(t, ip, "link", "add", name, "type", "nlmon")
	defer exec.Command(ip, "link", "del", name).Run()
	Run(t, ip, "link", "set", name, "up")
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	all := htons(unix.ETH_P_ALL)
	// SOCK_RAW: the packet from its mac header, which is where nlmon's
	// (headerless) packets start; SOCK_DGRAM strips an offset that is
	// meaningless for them and cut the first messages' headers.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, int(all))
	if err != nil {
		t.Fatalf("AF_PACKET socket: %v", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20); err != nil {
		t.Logf("SO_RCVBUF: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: all, Ifindex: ifi.Index}); err != nil {
		t.Fatalf("bind to %s: %v", name, err)
	}
	fn()
	var msgs []netlink.Message
	buf := make([]byte, 1<<16)
	for {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) {
			// The tap's packets pass nlmon's transmit path, which a
			// qdisc may finish in a softirq: wait for stragglers.
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, err := unix.Poll(pfd, 200); k > 0 || errors.Is(err, unix.EINTR) {
				continue
			}
			break
		}
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); !ok || ll.Protocol != htons(uint16(proto)) {
			continue
		}
		msgs = append(msgs, splitNetlink(t, buf[:n])...)
	}
	return msgs
}

// splitNetlink parses the messages of one datagram.
func splitNetlink(t testing.TB, b []byte) []netlink.Message {
	var out []netlink.Message
	for len(b) >= 16 {
		l := int(binary.NativeEndian.Uint32(b))
		if l < 16 || l > len(b) {
			t.Fatalf("captured netlink message of length %d in %d bytes", l, len(b))
		}
		// The last attribute's padding may be outside nlmsg_len; the
		// parser wants an aligned buffer.
		mb := make([]byte, (l+3)&^3)
		copy(mb, b[:l])
		var m netlink.Message
		if err := m.UnmarshalBinary(mb); err != nil {
			t.Fatalf("captured netlink message: %v", err)
		}
		out = append(out, m)
		l = (l + 3) &^ 3
		if l > len(b) {
			break
		}
		b = b[l:]
	}
	return out
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
