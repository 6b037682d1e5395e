package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// NetnsMode is the RDMA subsystem's network-namespace mode
// (RDMA_NLDEV_SYS_ATTR_NETNS_MODE).
type NetnsMode uint8

// Network namespace modes.
const (
	// NetnsExclusive: each device belongs to one network namespace and is
	// visible only there.
	NetnsExclusive NetnsMode = 0
	// NetnsShared: every device is visible in every namespace (the default).
	NetnsShared NetnsMode = 1
)

func (m NetnsMode) String() string {
	switch m {
	case NetnsExclusive:
		return "exclusive"
	case NetnsShared:
		return "shared"
	}
	return "unknown"
}

// ParseNetnsMode parses "shared" or "exclusive".
func ParseNetnsMode(s string) (NetnsMode, error) {
	switch s {
	case "shared":
		return NetnsShared, nil
	case "exclusive":
		return NetnsExclusive, nil
	}
	return 0, fmt.Errorf("nldev: netns mode %q: want shared or exclusive: %w", s, unix.EINVAL)
}

// System is the RDMA subsystem's global settings (RDMA_NLDEV_CMD_SYS_GET).
// Settings the running kernel does not report are nil.
type System struct {
	NetnsMode NetnsMode // RDMA_NLDEV_SYS_ATTR_NETNS_MODE (5.2)

	// PrivilegedQKey: only CAP_NET_RAW may use privileged Q_Keys
	// (RDMA_NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE, 6.7).
	PrivilegedQKey *bool

	// CopyOnFork: the kernel copies pinned pages on fork instead of
	// requiring MADV_DONTFORK (RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 5.13).
	CopyOnFork *bool

	// Monitor: the kernel sends RDMA monitor events
	// (RDMA_NLDEV_SYS_ATTR_MONITOR_MODE, 6.12).
	Monitor *bool
}

// System returns the subsystem's global settings.
func (c *Client) System() (System, error) {
	return getOne(c, request{op: "get system settings", cmd: nlabi.RDMA_NLDEV_CMD_SYS_GET}, "", decodeSystem)
}

// SetNetnsMode switches between shared and exclusive network-namespace
// mode (needs CAP_NET_ADMIN). Setting the mode in force changes nothing
// and succeeds; a change while other network namespaces exist is refused
// with an error matching ErrBusy and unix.EBUSY.
func (c *Client) SetNetnsMode(m NetnsMode) error {
	op := "set netns mode " + m.String()
	if m > NetnsShared {
		return invalid(op, fmt.Sprintf("unknown netns mode %d", uint8(m)))
	}
	return explainBusy(c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_SYS_SET, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint8(nlabi.RDMA_NLDEV_SYS_ATTR_NETNS_MODE, uint8(m))
	}}))
}

// SetPrivilegedQKey turns privileged Q_Key mode on or off (Linux 6.7 and
// later; on older kernels the error matches ErrNotSupported and nothing is
// sent).
func (c *Client) SetPrivilegedQKey(on bool) error {
	op := fmt.Sprintf("set privileged-qkey %s", onOff(on))
	sys, err := c.System()
	if err != nil {
		return err
	}
	if sys.PrivilegedQKey == nil {
		return &Error{Op: op, Err: fmt.Errorf("privileged Q_Key mode needs Linux 6.7: %w", ErrNotSupported)}
	}
	var v uint8
	if on {
		v = 1
	}
	return c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_SYS_SET, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint8(nlabi.RDMA_NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE, v)
	}})
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func decodeSystem(b []byte) (System, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return System{}, err
	}
	var s System
	flag := func() *bool { v := ad.Uint8() != 0; return &v }
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_SYS_ATTR_NETNS_MODE:
			s.NetnsMode = NetnsMode(ad.Uint8())
		case nlabi.RDMA_NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE:
			s.PrivilegedQKey = flag()
		case nlabi.RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK:
			s.CopyOnFork = flag()
		case nlabi.RDMA_NLDEV_SYS_ATTR_MONITOR_MODE:
			s.Monitor = flag()
		}
	}
	if err := ad.Err(); err != nil {
		return System{}, fmt.Errorf("decode system settings: %w", err)
	}
	return s, nil
}
