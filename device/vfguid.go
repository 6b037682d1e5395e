package device

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/rtnl"
)

// Why a VF GUID cannot be read or set. Both also match unix.EOPNOTSUPP,
// what the kernel answers in these cases.
var (
	// ErrNotInfiniBand: the netdev is not an InfiniBand (IPoIB) one
	// (ARPHRD_INFINIBAND); only those take VF GUIDs.
	ErrNotInfiniBand = errors.New("not an InfiniBand network device")

	// ErrNoVFs: the netdev is no SR-IOV physical function, or has no VF
	// with the number asked for.
	ErrNoVFs = errors.New("no such virtual function")

	// ErrInvalidGUID is matched (with unix.EINVAL) by ParseVFGUID's
	// errors: a GUID of the wrong length or with non-hex digits.
	ErrInvalidGUID = errors.New("invalid GUID")
)

// VF is one SR-IOV virtual function of an InfiniBand netdev.
type VF struct {
	Number uint32
	// NodeGUID and PortGUID are the VF's InfiniBand GUIDs; both zero and
	// HasGUIDs false when the driver does not report them.
	NodeGUID, PortGUID ib.GUID
	HasGUIDs           bool
}

// VFs returns the virtual functions of the InfiniBand netdev named
// netdev, with their GUIDs (RTM_GETLINK with RTEXT_FILTER_VF). A netdev
// that is not InfiniBand gives ErrNotInfiniBand; an IB netdev without
// VFs an empty list.
func VFs(netdev string) ([]VF, error) {
	op := "device: VFs of " + netdev
	c, l, err := ibLink(netdev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	c.Close()
	out := make([]VF, 0, len(l.VFs))
	for _, v := range l.VFs {
		out = append(out, VF{Number: v.Number, NodeGUID: ib.GUIDFromUint64(v.NodeGUID),
			PortGUID: ib.GUIDFromUint64(v.PortGUID), HasGUIDs: v.HasGUIDs})
	}
	return out, nil
}

// SetVFNodeGUID sets the node GUID of virtual function vf of the
// InfiniBand netdev named netdev (IFLA_VF_IB_NODE_GUID; needs
// CAP_NET_ADMIN), as "ip link set DEV vf N node_guid G" does. A netdev
// that is not InfiniBand, or has no VF vf, is refused before anything is
// sent (ErrNotInfiniBand, ErrNoVFs).
func SetVFNodeGUID(netdev string, vf uint32, guid ib.GUID) error {
	return setVFGUID("node", netdev, vf, rtnl.IFLA_VF_IB_NODE_GUID, guid)
}

// SetVFPortGUID is SetVFNodeGUID for the port GUID
// (IFLA_VF_IB_PORT_GUID, "ip link set DEV vf N port_guid G").
func SetVFPortGUID(netdev string, vf uint32, guid ib.GUID) error {
	return setVFGUID("port", netdev, vf, rtnl.IFLA_VF_IB_PORT_GUID, guid)
}

// SetVFGUIDs sets both GUIDs, node first; the kernel takes one per
// request. A zero node GUID breaks rdma_cm on the VF: set both.
func SetVFGUIDs(netdev string, vf uint32, node, port ib.GUID) error {
	if err := SetVFNodeGUID(netdev, vf, node); err != nil {
		return err
	}
	return SetVFPortGUID(netdev, vf, port)
}

func setVFGUID(which, netdev string, vf uint32, attr uint16, guid ib.GUID) error {
	op := fmt.Sprintf("device: set %s GUID of %s vf %d to %s", which, netdev, vf, guid)
	c, l, err := ibLink(netdev)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer c.Close()
	if !l.HasNumVF || vf >= l.NumVF {
		return fmt.Errorf("%s: %s has %d VFs: %w (%w)", op, netdev, l.NumVF, ErrNoVFs, unix.EOPNOTSUPP)
	}
	m, err := rtnl.SetVFGUIDRequest(l.Index, vf, attr, guid.Uint64())
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := c.Do(m); err != nil {
		return fmt.Errorf("%s: %w", op, unwrapOp(err))
	}
	return nil
}

// ibLink reads the netdev and checks that it is InfiniBand.
func ibLink(netdev string) (*rtnl.Conn, rtnl.Link, error) {
	if netdev == "" || len(netdev) >= unix.IFNAMSIZ {
		return nil, rtnl.Link{}, fmt.Errorf("network device name %q: %w", netdev, unix.EINVAL)
	}
	c, err := rtnl.Dial()
	if err != nil {
		return nil, rtnl.Link{}, err
	}
	l, err := c.Link(netdev)
	if err != nil {
		c.Close()
		return nil, rtnl.Link{}, unwrapOp(err)
	}
	if l.Type != rtnl.ARPHRD_INFINIBAND {
		c.Close()
		return nil, rtnl.Link{}, fmt.Errorf("%s has link type %d: %w (%w)", netdev, l.Type, ErrNotInfiniBand, unix.EOPNOTSUPP)
	}
	return c, l, nil
}

// unwrapOp keeps the errno and the kernel's extended-ack text of a
// netlink error, and makes a missing netdev match os.ErrNotExist.
func unwrapOp(err error) error {
	if errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("%w (%w)", err, os.ErrNotExist)
	}
	return err
}

// ParseVFGUID parses a GUID as "ip link … node_guid" takes it, eight
// colon-separated bytes ("00:11:22:33:44:55:66:77"), or in the forms
// ib.ParseGUID reads. Errors match ErrInvalidGUID and unix.EINVAL.
func ParseVFGUID(s string) (ib.GUID, error) {
	if len(s) == 23 {
		var g ib.GUID
		for i := range g {
			if i < 7 && s[3*i+2] != ':' {
				return ib.GUID{}, badGUID(s)
			}
			b, err := strconv.ParseUint(s[3*i:3*i+2], 16, 8)
			if err != nil {
				return ib.GUID{}, badGUID(s)
			}
			g[i] = byte(b)
		}
		return g, nil
	}
	g, err := ib.ParseGUID(s)
	if err != nil {
		return ib.GUID{}, badGUID(s)
	}
	return g, nil
}

func badGUID(s string) error {
	return fmt.Errorf("device: GUID %q: want xx:xx:xx:xx:xx:xx:xx:xx: %w (%w)", s, ErrInvalidGUID, unix.EINVAL)
}
