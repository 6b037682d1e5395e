package ib

import (
	"fmt"
	"net/netip"
)

// GID is a 128-bit global identifier (union ib_gid), in network byte
// order as uverbs and sysfs carry it. On RoCE ports GIDs are IPv6
// addresses (IPv4 ones mapped into ::ffff:0:0/96).
type GID [16]byte

// IsZero reports whether every byte is zero: an empty GID table slot.
func (g GID) IsZero() bool { return g == GID{} }

// Addr returns the GID as an IPv6 address.
func (g GID) Addr() netip.Addr { return netip.AddrFrom16(g) }

// String formats the GID as an IPv6 address in RFC 5952 form
// ("fe80::5054:ff:fe12:3456", "::ffff:10.0.0.1").
func (g GID) String() string { return g.Addr().String() }

// GIDFromAddr returns the GID of an address; IPv4 addresses are mapped
// into ::ffff:0:0/96 as RoCE v2 does.
func GIDFromAddr(a netip.Addr) GID { return GID(a.As16()) }

// ParseGID parses a GID written as an IPv6 (or IPv4) address, or in
// sysfs's form of eight groups of four hex digits.
func ParseGID(s string) (GID, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return GID{}, fmt.Errorf("ib: invalid GID %q", s)
	}
	if a.Zone() != "" {
		return GID{}, fmt.Errorf("ib: invalid GID %q: has a zone", s)
	}
	return GIDFromAddr(a), nil
}

// GIDType is the kind of a GID table entry (enum ib_uverbs_gid_type in
// rdma/ib_user_ioctl_verbs.h; the kernel's enum ib_gid_type).
type GIDType uint8

// GID types.
const (
	GIDTypeIB     GIDType = 0 // IB_UVERBS_GID_TYPE_IB
	GIDTypeRoCEv1 GIDType = 1 // IB_UVERBS_GID_TYPE_ROCE_V1
	GIDTypeRoCEv2 GIDType = 2 // IB_UVERBS_GID_TYPE_ROCE_V2 (RoCE over UDP)
)

// String returns "IB", "RoCE v1" or "RoCE v2" (v1 and v2 as sysfs's
// gid_attrs/types files write them).
func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return fmt.Sprintf("GIDType(%d)", uint8(t))
}
