package rtnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Link is what rtnl reads of an RTM_NEWLINK message.
type Link struct {
	Index int32
	Name  string // IFLA_IFNAME
	Type  uint16 // ifi_type: ARPHRD_*

	// NumVF is IFLA_NUM_VF; HasNumVF is false when the kernel did not
	// send it (a device that is no SR-IOV physical function).
	NumVF    uint32
	HasNumVF bool

	VFs []VF // IFLA_VFINFO_LIST, when asked for with RTEXT_FILTER_VF
}

// VF is one IFLA_VF_INFO.
type VF struct {
	Number uint32 // the VF number, from IFLA_VF_MAC (always sent)

	// NodeGUID and PortGUID are the ifla_vf_guid values, host-order
	// numbers; HasGUIDs is false when the driver has no ndo_get_vf_guid
	// (the kernel then sends neither).
	NodeGUID, PortGUID uint64
	HasGUIDs           bool
}

// errProto marks bytes that break the ABI.
var errProto = unix.EPROTO

// DecodeLink parses the payload of an RTM_NEWLINK message: ifinfomsg,
// then attributes.
func DecodeLink(b []byte) (Link, error) {
	if len(b) < SizeofIfInfomsg {
		return Link{}, fmt.Errorf("link message of %d bytes, shorter than ifinfomsg: %w", len(b), errProto)
	}
	hdr := unmarshalIfInfomsg(b)
	l := Link{Index: hdr.Index, Type: hdr.Type}
	ad, err := netlink.NewAttributeDecoder(b[SizeofIfInfomsg:])
	if err != nil {
		return Link{}, fmt.Errorf("link %d: %w", hdr.Index, err)
	}
	for ad.Next() {
		switch ad.Type() {
		case IFLA_IFNAME:
			l.Name = ad.String()
		case IFLA_NUM_VF:
			l.NumVF, l.HasNumVF = ad.Uint32(), true
		case IFLA_VFINFO_LIST:
			ad.Nested(func(nd *netlink.AttributeDecoder) error {
				for nd.Next() {
					if nd.Type() != IFLA_VF_INFO {
						continue
					}
					var vf VF
					var perr error
					nd.Nested(func(vd *netlink.AttributeDecoder) error {
						vf, perr = decodeVF(vd)
						return perr
					})
					if perr != nil {
						return perr
					}
					l.VFs = append(l.VFs, vf)
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return Link{}, fmt.Errorf("decode link %d: %w", hdr.Index, err)
	}
	return l, nil
}

func decodeVF(vd *netlink.AttributeDecoder) (VF, error) {
	var vf VF
	var haveMAC, node, port bool
	for vd.Next() {
		switch vd.Type() {
		case IFLA_VF_MAC:
			b := vd.Bytes()
			if len(b) != sizeofIflaVFMAC {
				return VF{}, fmt.Errorf("IFLA_VF_MAC of %d bytes, want %d: %w", len(b), sizeofIflaVFMAC, errProto)
			}
			vf.Number, haveMAC = binary.NativeEndian.Uint32(b), true
		case IFLA_VF_IB_NODE_GUID, IFLA_VF_IB_PORT_GUID:
			g, ok := unmarshalIflaVFGUID(vd.Bytes())
			if !ok {
				return VF{}, fmt.Errorf("VF GUID attribute %d of %d bytes, want %d: %w", vd.Type(), len(vd.Bytes()), SizeofIflaVFGUID, errProto)
			}
			if vd.Type() == IFLA_VF_IB_NODE_GUID {
				vf.NodeGUID, node = g.GUID, true
			} else {
				vf.PortGUID, port = g.GUID, true
			}
		}
	}
	if !haveMAC {
		return VF{}, fmt.Errorf("VF info without IFLA_VF_MAC: %w", errProto)
	}
	vf.HasGUIDs = node && port
	return vf, nil
}

// GetLinkRequest is RTM_GETLINK for the netdev named name, with its VF
// list (IFLA_EXT_MASK = RTEXT_FILTER_VF), as "ip link show DEV" sends it.
func GetLinkRequest(name string) netlink.Message {
	ae := netlink.NewAttributeEncoder()
	ae.String(IFLA_IFNAME, name)
	ae.Uint32(IFLA_EXT_MASK, RTEXT_FILTER_VF)
	attrs, _ := ae.Encode()
	return netlink.Message{
		Header: netlink.Header{Type: RTM_GETLINK, Flags: netlink.Request},
		Data:   append(IfInfomsg{Family: unix.AF_UNSPEC}.Marshal(), attrs...),
	}
}

// SetVFGUIDRequest is the RTM_NEWLINK that "ip link set DEV vf N
// node_guid G" (attr IFLA_VF_IB_NODE_GUID) or "… port_guid G"
// (IFLA_VF_IB_PORT_GUID) sends: ifinfomsg with the index, then
// IFLA_VFINFO_LIST { IFLA_VF_INFO { attr: ifla_vf_guid } }. One GUID per
// request: the kernel (do_setvfinfo) acts on the node GUID of an
// IFLA_VF_INFO and returns, ignoring a port GUID next to it.
func SetVFGUIDRequest(ifindex int32, vf uint32, attr uint16, guid uint64) (netlink.Message, error) {
	if attr != IFLA_VF_IB_NODE_GUID && attr != IFLA_VF_IB_PORT_GUID {
		return netlink.Message{}, fmt.Errorf("attribute %d is no VF GUID: %w", attr, unix.EINVAL)
	}
	ae := netlink.NewAttributeEncoder()
	// iproute2 nests without NLA_F_NESTED (addattr_nest); the kernel
	// accepts both. Build the nests by hand to send the same bytes.
	inner := netlink.NewAttributeEncoder()
	inner.Bytes(attr, IflaVFGUID{VF: vf, GUID: guid}.Marshal())
	vfInfo, err := inner.Encode()
	if err != nil {
		return netlink.Message{}, err
	}
	list := netlink.NewAttributeEncoder()
	list.Bytes(IFLA_VF_INFO, vfInfo)
	vfList, err := list.Encode()
	if err != nil {
		return netlink.Message{}, err
	}
	ae.Bytes(IFLA_VFINFO_LIST, vfList)
	attrs, err := ae.Encode()
	if err != nil {
		return netlink.Message{}, err
	}
	return netlink.Message{
		Header: netlink.Header{Type: RTM_NEWLINK, Flags: netlink.Request | netlink.Acknowledge},
		Data:   append(IfInfomsg{Family: unix.AF_UNSPEC, Index: ifindex}.Marshal(), attrs...),
	}, nil
}

// Conn is an rtnetlink socket.
type Conn struct{ c *netlink.Conn }

// Dial opens an rtnetlink socket in the calling thread's namespace.
func Dial() (*Conn, error) {
	c, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		return nil, err
	}
	_ = c.SetOption(netlink.ExtendedAcknowledge, true)
	return &Conn{c: c}, nil
}

// NewConn wraps an open connection; tests pass an nltest one.
func NewConn(c *netlink.Conn) *Conn { return &Conn{c: c} }

// Close closes the socket. Closing twice is harmless.
func (c *Conn) Close() error {
	if c == nil || c.c == nil {
		return nil
	}
	err := c.c.Close()
	c.c = nil
	return err
}

// Link reads the netdev named name with its VF list. A missing netdev
// gives the kernel's ENODEV.
func (c *Conn) Link(name string) (Link, error) {
	if c == nil || c.c == nil {
		return Link{}, unix.EBADF
	}
	msgs, err := c.c.Execute(GetLinkRequest(name))
	if err != nil {
		return Link{}, err
	}
	for _, m := range msgs {
		if m.Header.Type == RTM_NEWLINK {
			return DecodeLink(m.Data)
		}
	}
	return Link{}, fmt.Errorf("no RTM_NEWLINK in the reply: %w", errProto)
}

// Do sends a request that answers with an acknowledgement only.
func (c *Conn) Do(m netlink.Message) error {
	if c == nil || c.c == nil {
		return unix.EBADF
	}
	_, err := c.c.Execute(m)
	return err
}
