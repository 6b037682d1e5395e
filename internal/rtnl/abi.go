package rtnl

import (
	"encoding/binary"
	"unsafe"
)

// Message types (enum in linux/rtnetlink.h).
const (
	RTM_NEWLINK = 16
	RTM_GETLINK = 18
)

// Link attributes (enum IFLA_* in linux/if_link.h) that rtnl reads or
// sends.
const (
	IFLA_IFNAME      = 3
	IFLA_NUM_VF      = 21 // u32: the number of VFs enabled
	IFLA_VFINFO_LIST = 22 // nest of IFLA_VF_INFO
	IFLA_EXT_MASK    = 29 // u32: RTEXT_FILTER_*
)

// IFLA_VF_INFO is the one attribute type inside IFLA_VFINFO_LIST (enum
// in linux/if_link.h).
const IFLA_VF_INFO = 1

// VF attributes inside IFLA_VF_INFO (enum IFLA_VF_* in linux/if_link.h).
const (
	IFLA_VF_MAC          = 1  // struct ifla_vf_mac
	IFLA_VF_IB_NODE_GUID = 10 // struct ifla_vf_guid (4.6)
	IFLA_VF_IB_PORT_GUID = 11 // struct ifla_vf_guid (4.6)
)

// RTEXT_FILTER_VF asks RTM_GETLINK for the VF list (linux/rtnetlink.h).
const RTEXT_FILTER_VF = 1 << 0

// ARPHRD_INFINIBAND is an IPoIB netdev's type (linux/if_arp.h); only such
// a netdev takes VF GUIDs (net/core/rtnetlink.c, handle_vf_guid).
const ARPHRD_INFINIBAND = 32

// IfInfomsg is struct ifinfomsg (linux/rtnetlink.h), 16 bytes: the
// fixed header of every link message.
type IfInfomsg struct {
	Family uint8
	_      uint8 // __ifi_pad
	Type   uint16
	Index  int32
	Flags  uint32
	Change uint32
}

// SizeofIfInfomsg is sizeof(struct ifinfomsg).
const SizeofIfInfomsg = int(unsafe.Sizeof(IfInfomsg{}))

// Marshal returns the struct's bytes in host order, as the kernel reads it.
func (m IfInfomsg) Marshal() []byte {
	b := make([]byte, SizeofIfInfomsg)
	b[0] = m.Family
	binary.NativeEndian.PutUint16(b[2:], m.Type)
	binary.NativeEndian.PutUint32(b[4:], uint32(m.Index))
	binary.NativeEndian.PutUint32(b[8:], m.Flags)
	binary.NativeEndian.PutUint32(b[12:], m.Change)
	return b
}

func unmarshalIfInfomsg(b []byte) IfInfomsg {
	return IfInfomsg{Family: b[0], Type: binary.NativeEndian.Uint16(b[2:]),
		Index: int32(binary.NativeEndian.Uint32(b[4:])), Flags: binary.NativeEndian.Uint32(b[8:]),
		Change: binary.NativeEndian.Uint32(b[12:])}
}

// IflaVFGUID is struct ifla_vf_guid (linux/if_link.h), 16 bytes: the VF
// number, 4 bytes of padding (the __u64 is 8-aligned), and the GUID as a
// host-order u64 whose most significant byte is the GUID's first. The
// kernel hands the number to the driver unchanged (ndo_set_vf_guid),
// which stores it big-endian (mlx5: MLX5_SET64), and iproute2 builds it
// so from "xx:xx:…" (get_guid): a GUID sent byte-swapped in host order
// ends up reversed on the wire.
type IflaVFGUID struct {
	VF   uint32
	_    [4]byte
	GUID uint64
}

// SizeofIflaVFGUID is sizeof(struct ifla_vf_guid).
const SizeofIflaVFGUID = int(unsafe.Sizeof(IflaVFGUID{}))

// Marshal returns the struct's bytes in host order.
func (g IflaVFGUID) Marshal() []byte {
	b := make([]byte, SizeofIflaVFGUID)
	binary.NativeEndian.PutUint32(b, g.VF)
	binary.NativeEndian.PutUint64(b[8:], g.GUID)
	return b
}

// unmarshalIflaVFGUID reads the struct; ok is false for any other length.
func unmarshalIflaVFGUID(b []byte) (IflaVFGUID, bool) {
	if len(b) != SizeofIflaVFGUID {
		return IflaVFGUID{}, false
	}
	return IflaVFGUID{VF: binary.NativeEndian.Uint32(b), GUID: binary.NativeEndian.Uint64(b[8:])}, true
}

// sizeofIflaVFMAC is sizeof(struct ifla_vf_mac) (linux/if_link.h): __u32
// vf, __u8 mac[32].
const sizeofIflaVFMAC = 36
