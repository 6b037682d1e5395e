package rtnl

import (
	"testing"
	"unsafe"
)

// TestSizes checks the structs against linux/rtnetlink.h and
// linux/if_link.h: struct ifinfomsg is 16 bytes; struct ifla_vf_guid is 16,
// its __u64 guid at offset 8 after 4 bytes of padding.
func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(struct ifinfomsg)", unsafe.Sizeof(IfInfomsg{}), 16},
		{"offsetof(ifinfomsg, ifi_type)", unsafe.Offsetof(IfInfomsg{}.Type), 2},
		{"offsetof(ifinfomsg, ifi_index)", unsafe.Offsetof(IfInfomsg{}.Index), 4},
		{"offsetof(ifinfomsg, ifi_change)", unsafe.Offsetof(IfInfomsg{}.Change), 12},
		{"sizeof(struct ifla_vf_guid)", unsafe.Sizeof(IflaVFGUID{}), 16},
		{"offsetof(ifla_vf_guid, guid)", unsafe.Offsetof(IflaVFGUID{}.GUID), 8},
		{"len(Marshal(ifla_vf_guid))", uintptr(len(IflaVFGUID{}.Marshal())), 16},
		{"len(Marshal(ifinfomsg))", uintptr(len(IfInfomsg{}.Marshal())), 16},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}
