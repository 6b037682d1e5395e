package rtnl

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// requests picks the RTM_NEWLINK requests out of a capture.
func newlinkRequests(msgs []netlink.Message) []netlink.Message {
	var out []netlink.Message
	for _, m := range msgs {
		if m.Header.Type == RTM_NEWLINK && m.Header.Flags&netlink.Request != 0 {
			out = append(out, m)
		}
	}
	return out
}

// sendVFGUID is the child's part of TestIntegrationVFGUIDMatchesIproute2:
// it sends one VF GUID request, which the kernel must refuse with
// EOPNOTSUPP (veth has no ndo_set_vf_guid).
func sendVFGUID(t *testing.T, netdev, word string) {
	ifi, err := net.InterfaceByName(netdev)
	if err != nil {
		t.Fatal(err)
	}
	attr := uint16(IFLA_VF_IB_NODE_GUID)
	if word == "port_guid" {
		attr = IFLA_VF_IB_PORT_GUID
	}
	m, err := SetVFGUIDRequest(int32(ifi.Index), 3, attr, 0x0002c90300216e70)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Do(m); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("the kernel answered %v, want EOPNOTSUPP", err)
	}
}

// vfRequests picks the requests that carry IFLA_VFINFO_LIST; any other
// must carry no VF attribute at all (nothing of ours is compared with it).
func vfRequests(t *testing.T, reqs []netlink.Message) []netlink.Message {
	t.Helper()
	var out []netlink.Message
	for _, m := range reqs {
		if len(m.Data) < SizeofIfInfomsg {
			t.Fatalf("short RTM_NEWLINK request %x", m.Data)
		}
		ad, err := netlink.NewAttributeDecoder(m.Data[SizeofIfInfomsg:])
		if err != nil {
			t.Fatal(err)
		}
		vf := false
		for ad.Next() {
			vf = vf || ad.Type() == IFLA_VFINFO_LIST
		}
		if vf {
			out = append(out, m)
		}
	}
	return out
}

func dump(msgs []netlink.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(strconv.Itoa(int(m.Header.Type)) + " flags " + strconv.Itoa(int(m.Header.Flags)) + " seq " +
			strconv.Itoa(int(m.Header.Sequence)) + ": " + hex.EncodeToString(m.Data) + "\n")
	}
	return b.String()
}

// TestIntegrationVFGUIDMatchesIproute2 reads with strace what "ip link set
// DEV vf 3 node_guid G" and "… port_guid G" send and what this test binary
// sends for SetVFGUIDRequest, and compares them byte for byte, with the
// kernel's answer to each. (An nlmon capture read a refused request's
// payload overwritten with the kernel's acknowledgement, so strace is the
// oracle for both.) The guest's netdevs have no VFs and are not
// InfiniBand, so the kernel refuses both (EOPNOTSUPP); the bytes are the
// point, the GUID's byte order above all. Then every RTM_NEWLINK of a
// real dump with VF info is decoded.
func TestIntegrationVFGUIDMatchesIproute2(t *testing.T) {
	testenv.RequireRDMA(t)
	const netdev = "veth0"
	if word := os.Getenv("RDMASTACK_RTNL_SEND"); word != "" {
		sendVFGUID(t, netdev, word)
		return
	}
	ip := testenv.Oracle(t, "ip")
	ifi, err := net.InterfaceByName(netdev)
	if err != nil {
		t.Fatal(err)
	}
	const guid = 0x0002c90300216e70
	var replies []netlink.Message
	for _, tc := range []struct {
		word string
		attr uint16
	}{{"node_guid", IFLA_VF_IB_NODE_GUID}, {"port_guid", IFLA_VF_IB_PORT_GUID}} {
		// iproute2 sends an empty RTM_NEWLINK probe first: see vfRequests.
		theirs, theirStderr, theirsOK := testenv.StraceNetlink(t, ip, "link", "set", "dev", netdev, "vf", "3", tc.word, "00:02:c9:03:00:21:6e:70")
		m, err := SetVFGUIDRequest(int32(ifi.Index), 3, tc.attr, guid)
		if err != nil {
			t.Fatal(err)
		}
		// Ours: this test binary again, under strace, sending m alone.
		t.Setenv("RDMASTACK_RTNL_SEND", tc.word)
		ours, ourStderr, ourOK := testenv.StraceNetlink(t, os.Args[0], "-test.run=^TestIntegrationVFGUIDMatchesIproute2$", "-test.count=1")
		t.Setenv("RDMASTACK_RTNL_SEND", "")
		tr, or := vfRequests(t, newlinkRequests(theirs)), vfRequests(t, newlinkRequests(ours))
		if len(tr) != 1 || len(or) != 1 {
			t.Fatalf("%s: captured %d RTM_NEWLINK requests with a VF list from iproute2 and %d from us, want 1 each; iproute2's:\n%sours:\n%s",
				tc.word, len(tr), len(or), dump(newlinkRequests(theirs)), dump(ours))
		}
		if tr[0].Header.Flags != or[0].Header.Flags {
			t.Errorf("%s: flags: iproute2 %#x, ours %#x", tc.word, tr[0].Header.Flags, or[0].Header.Flags)
		}
		if !bytes.Equal(tr[0].Data, or[0].Data) || !bytes.Equal(or[0].Data, m.Data) {
			t.Errorf("%s: payload: iproute2\n%x, ours as sent\n%x, as built\n%x", tc.word, tr[0].Data, or[0].Data, m.Data)
		}
		if !ourOK {
			t.Errorf("%s: our sender failed:\n%s", tc.word, ourStderr)
		}
		if theirsOK || !strings.Contains(theirStderr, "Operation not supported") {
			t.Errorf("%s: iproute2 exit 0 %v, stderr %q; want EOPNOTSUPP", tc.word, theirsOK, theirStderr)
		}
	}

	// Every link the kernel describes in a dump with VF info decodes, and
	// agrees with what the net package and sysfs say of it.
	nc, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(IFLA_EXT_MASK, RTEXT_FILTER_VF)
	attrs, _ := ae.Encode()
	replies, err = nc.Execute(netlink.Message{Header: netlink.Header{Type: RTM_GETLINK, Flags: netlink.Request | netlink.Dump},
		Data: append(IfInfomsg{}.Marshal(), attrs...)})
	if err != nil || len(replies) == 0 {
		t.Fatalf("dump links: %d, %v", len(replies), err)
	}
	for _, m := range replies {
		l, err := DecodeLink(m.Data)
		if err != nil {
			t.Fatalf("decode a real RTM_NEWLINK: %v\n%x", err, m.Data)
		}
		ni, err := net.InterfaceByIndex(int(l.Index))
		if err != nil || ni.Name != l.Name {
			t.Errorf("link %d %q: the net package says %v, %v", l.Index, l.Name, ni, err)
			continue
		}
		typ, _ := os.ReadFile(filepath.Join("/sys/class/net", l.Name, "type"))
		if strings.TrimSpace(string(typ)) != strconv.Itoa(int(l.Type)) {
			t.Errorf("%s: sysfs type %q, decoded %d", l.Name, typ, l.Type)
		}
		if len(l.VFs) != 0 || (l.HasNumVF && l.NumVF != 0) {
			t.Errorf("%s: %d VFs (IFLA_NUM_VF %d) in a guest without SR-IOV", l.Name, len(l.VFs), l.NumVF)
		}
	}
	if out := testenv.OutDir(); out != "" {
		dir := filepath.Join(out, "testdata", "rtnl", testenv.KernelRelease())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var all []byte
		for _, m := range replies {
			b, _ := m.MarshalBinary()
			all = append(all, b...)
		}
		if err := os.WriteFile(filepath.Join(dir, "newlink-dump.bin"), all, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIntegrationRtnlLink reads the guest's veth0 and loopback through Conn.
func TestIntegrationRtnlLink(t *testing.T) {
	testenv.RequireRDMA(t)
	c, err := Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, typ := range map[string]uint16{"veth0": unix.ARPHRD_ETHER, "lo": unix.ARPHRD_LOOPBACK} {
		l, err := c.Link(name)
		if err != nil || l.Name != name || l.Type != typ {
			t.Errorf("Link(%s) = %+v, %v; want type %d", name, l, err, typ)
		}
	}
	if _, err := c.Link("rdmst-none"); !errors.Is(err, unix.ENODEV) {
		t.Errorf("Link of a missing netdev = %v, want ENODEV", err)
	}
}
