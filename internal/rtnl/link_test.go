package rtnl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// attr appends one netlink attribute (header, payload, padding) the way
// the kernel's nla_put does.
func attr(b []byte, typ uint16, payload []byte) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(4+len(payload)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// vfGUID is struct ifla_vf_guid written field by field.
func vfGUID(vf uint32, guid uint64) []byte {
	b := binary.NativeEndian.AppendUint32(nil, vf)
	b = append(b, 0, 0, 0, 0)
	return binary.NativeEndian.AppendUint64(b, guid)
}

// vfMAC is struct ifla_vf_mac: vf, then 32 bytes of address.
func vfMAC(vf uint32) []byte { return append(u32(vf), make([]byte, 32)...) }

// ifinfomsg is struct ifinfomsg written field by field.
func ifinfomsg(typ uint16, index int32) []byte {
	b := []byte{unix.AF_UNSPEC, 0}
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = binary.NativeEndian.AppendUint32(b, uint32(index))
	return append(b, make([]byte, 8)...)
}

func TestSetVFGUIDRequest(t *testing.T) {
	const guid = 0x0011223344556677 // "00:11:22:33:44:55:66:77" as iproute2's get_guid builds it
	for _, a := range []uint16{IFLA_VF_IB_NODE_GUID, IFLA_VF_IB_PORT_GUID} {
		m, err := SetVFGUIDRequest(7, 3, a, guid)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Type != RTM_NEWLINK || m.Header.Flags != netlink.Request|netlink.Acknowledge {
			t.Errorf("header %+v, want RTM_NEWLINK request|ack", m.Header)
		}
		want := ifinfomsg(0, 7)
		want = attr(want, IFLA_VFINFO_LIST, attr(nil, IFLA_VF_INFO, attr(nil, a, vfGUID(3, guid))))
		if !bytes.Equal(m.Data, want) {
			t.Errorf("attr %d payload\n%x, want\n%x", a, m.Data, want)
		}
		// The GUID's first byte is the number's most significant: on a
		// little-endian host it is the last of the eight.
		if g := m.Data[len(m.Data)-8:]; binary.NativeEndian.Uint64(g) != guid {
			t.Errorf("GUID bytes %x", g)
		}
	}
	if _, err := SetVFGUIDRequest(1, 0, IFLA_VF_MAC, 1); !errors.Is(err, unix.EINVAL) {
		t.Errorf("a MAC attribute: %v, want EINVAL", err)
	}
}

// linkWithVFs is an RTM_NEWLINK payload laid out as rtnl_fill_ifinfo and
// rtnl_fill_vfinfo write it for an IPoIB PF with two VFs, the second
// without GUIDs, with attributes rtnl does not read in between.
func linkWithVFs() []byte {
	b := ifinfomsg(ARPHRD_INFINIBAND, 5)
	b = attr(b, IFLA_IFNAME, []byte("ib0\x00"))
	b = attr(b, 4 /* IFLA_MTU */, u32(2044))
	b = attr(b, IFLA_NUM_VF, u32(2))
	vf0 := attr(nil, IFLA_VF_MAC, vfMAC(0))
	vf0 = attr(vf0, 2 /* IFLA_VF_VLAN */, make([]byte, 12))
	vf0 = attr(vf0, IFLA_VF_IB_NODE_GUID, vfGUID(0, 0x0002c90300216e70))
	vf0 = attr(vf0, IFLA_VF_IB_PORT_GUID, vfGUID(0, 0x0002c90300216e78))
	vf1 := attr(nil, IFLA_VF_MAC, vfMAC(1))
	list := attr(nil, IFLA_VF_INFO, vf0)
	list = attr(list, IFLA_VF_INFO, vf1)
	return attr(b, IFLA_VFINFO_LIST, list)
}

func TestDecodeLink(t *testing.T) {
	l, err := DecodeLink(linkWithVFs())
	if err != nil {
		t.Fatal(err)
	}
	if l.Index != 5 || l.Name != "ib0" || l.Type != ARPHRD_INFINIBAND || !l.HasNumVF || l.NumVF != 2 {
		t.Errorf("link %+v", l)
	}
	want := []VF{{Number: 0, NodeGUID: 0x0002c90300216e70, PortGUID: 0x0002c90300216e78, HasGUIDs: true}, {Number: 1}}
	if len(l.VFs) != 2 || l.VFs[0] != want[0] || l.VFs[1] != want[1] {
		t.Errorf("VFs %+v, want %+v", l.VFs, want)
	}
	// A GUID attribute of the wrong length, a VF without its MAC, a
	// truncated header: errors, never a guess.
	bad := ifinfomsg(ARPHRD_INFINIBAND, 5)
	short := attr(bad, IFLA_VFINFO_LIST, attr(nil, IFLA_VF_INFO,
		attr(attr(nil, IFLA_VF_MAC, vfMAC(0)), IFLA_VF_IB_NODE_GUID, u32(1))))
	noMAC := attr(bad, IFLA_VFINFO_LIST, attr(nil, IFLA_VF_INFO, attr(nil, IFLA_VF_IB_NODE_GUID, vfGUID(0, 1))))
	for name, b := range map[string][]byte{"short GUID": short, "no MAC": noMAC, "header": bad[:10]} {
		if _, err := DecodeLink(b); !errors.Is(err, unix.EPROTO) {
			t.Errorf("%s: %v, want EPROTO", name, err)
		}
	}
}

func FuzzDecodeLink(f *testing.F) {
	f.Add(linkWithVFs())
	f.Add(ifinfomsg(1, 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLink(b)
		if err != nil {
			return
		}
		if len(b) < SizeofIfInfomsg {
			t.Fatalf("decoded %d bytes: %+v", len(b), l)
		}
		if len(l.VFs) > len(b)/8 {
			t.Fatalf("%d VFs from %d bytes", len(l.VFs), len(b))
		}
		again, err := DecodeLink(b)
		if err != nil || again.Name != l.Name || len(again.VFs) != len(l.VFs) {
			t.Fatalf("second decode differs: %+v %v", again, err)
		}
	})
}

// TestConnLink answers RTM_GETLINK from a fake kernel and checks the
// request: the name and RTEXT_FILTER_VF, as "ip link show" asks.
func TestConnLink(t *testing.T) {
	var got netlink.Message
	c := NewConn(nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
		got = reqs[0]
		return []netlink.Message{{Header: netlink.Header{Type: RTM_NEWLINK, Sequence: got.Header.Sequence, PID: got.Header.PID}, Data: linkWithVFs()}}, nil
	}))
	defer c.Close()
	l, err := c.Link("ib0")
	if err != nil || l.Name != "ib0" || len(l.VFs) != 2 {
		t.Fatalf("Link: %+v, %v", l, err)
	}
	want := attr(attr(ifinfomsg(0, 0), IFLA_IFNAME, []byte("ib0\x00")), IFLA_EXT_MASK, u32(RTEXT_FILTER_VF))
	if got.Header.Type != RTM_GETLINK || !bytes.Equal(got.Data, want) {
		t.Errorf("request %+v %x, want RTM_GETLINK %x", got.Header, got.Data, want)
	}
	c.Close()
	if _, err := c.Link("ib0"); !errors.Is(err, unix.EBADF) {
		t.Errorf("after Close: %v, want EBADF", err)
	}
}
