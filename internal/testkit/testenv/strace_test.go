package testenv

import (
	"bytes"
	"strings"
	"testing"
)

// TestStraceNetlink reads back what "ip link set dev lo vf 3 node_guid G"
// sends: the last RTM_NEWLINK request carries the VF GUID in host order.
func TestStraceNetlink(t *testing.T) {
	msgs, stderr, ok := StraceNetlink(t, Oracle(t, "ip"), "link", "set", "dev", "lo", "vf", "3", "node_guid", "00:02:c9:03:00:21:6e:70")
	if ok || !strings.Contains(stderr, "Operation not supported") {
		t.Fatalf("the kernel took a VF GUID for lo, or ip said %q", stderr)
	}
	var last []byte
	for _, m := range msgs {
		if m.Header.Type == 16 && m.Header.Flags&1 != 0 {
			last = m.Data
		}
	}
	// ifinfomsg (16 bytes), IFLA_VFINFO_LIST, IFLA_VF_INFO,
	// IFLA_VF_IB_NODE_GUID { vf 3, pad, guid }.
	want := []byte{0x1c, 0, 0x16, 0, 0x18, 0, 1, 0, 0x14, 0, 0x0a, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0x70, 0x6e, 0x21, 0, 3, 0xc9, 2, 0}
	if len(last) != 16+len(want) || !bytes.Equal(last[16:], want) {
		t.Errorf("captured %d messages; the last RTM_NEWLINK request %x, want attributes %x", len(msgs), last, want)
	}
}
