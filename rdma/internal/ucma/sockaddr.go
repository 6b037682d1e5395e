package ucma

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// Offsets in struct sockaddr_in, sockaddr_in6 and sockaddr_ib
// (infiniband/ib.h). sa_family and scope ids are host-endian; ports,
// flowinfo, pkeys and service ids big-endian.
const (
	offPort    = 2
	offIn4     = 4
	offIn6Flow = 4
	offIn6     = 8
	offIn6Zone = 24
	offIBPKey  = 2
	offIBGID   = 8
	offIBSID   = 24
)

// PutSockaddr writes ap into s as a sockaddr_in (an IPv4 or IPv4-mapped
// address) or sockaddr_in6 and returns the size the command must carry.
// A zone must be a numeric interface index (package rdma resolves names
// before): an invalid ap, or a zone that is not a number, gives 0, never
// a scope id of 0 in place of the one meant.
func PutSockaddr(s *SockaddrStorage, ap netip.AddrPort) uint16 {
	*s = SockaddrStorage{}
	a := ap.Addr()
	switch {
	case !a.IsValid():
		return 0
	case a.Is4() || a.Is4In6():
		binary.NativeEndian.PutUint16(s[0:], AF_INET)
		binary.BigEndian.PutUint16(s[offPort:], ap.Port())
		b := a.Unmap().As4()
		copy(s[offIn4:], b[:])
		return SizeofSockaddrIn
	}
	var scope uint64
	if z := a.Zone(); z != "" {
		n, err := strconv.ParseUint(z, 10, 32)
		if err != nil {
			return 0
		}
		scope = n
	}
	binary.NativeEndian.PutUint16(s[0:], AF_INET6)
	binary.BigEndian.PutUint16(s[offPort:], ap.Port())
	b := a.As16()
	copy(s[offIn6:], b[:])
	binary.NativeEndian.PutUint32(s[offIn6Zone:], uint32(scope))
	return SizeofSockaddrIn6
}

// Sockaddr reads an AF_INET or AF_INET6 address (an IPv6 scope id becomes
// the zone, in decimal). Other families, or too few bytes, give an
// invalid AddrPort and the family.
func Sockaddr(b []byte) (uint16, netip.AddrPort) {
	if len(b) < 2 {
		return 0, netip.AddrPort{}
	}
	family := binary.NativeEndian.Uint16(b)
	switch family {
	case AF_INET:
		if len(b) < SizeofSockaddrIn {
			break
		}
		a := netip.AddrFrom4([4]byte(b[offIn4 : offIn4+4]))
		return family, netip.AddrPortFrom(a, binary.BigEndian.Uint16(b[offPort:]))
	case AF_INET6:
		if len(b) < SizeofSockaddrIn6 {
			break
		}
		a := netip.AddrFrom16([16]byte(b[offIn6 : offIn6+16]))
		if z := binary.NativeEndian.Uint32(b[offIn6Zone:]); z != 0 {
			a = a.WithZone(strconv.FormatUint(uint64(z), 10))
		}
		return family, netip.AddrPortFrom(a, binary.BigEndian.Uint16(b[offPort:]))
	}
	return family, netip.AddrPort{}
}

// SockaddrIB reads a struct sockaddr_ib: the GID, the pkey and the service
// id. ok is false for another family or too few bytes.
func SockaddrIB(b []byte) (gid [16]byte, pkey uint16, sid uint64, ok bool) {
	if len(b) < SizeofSockaddrIB || binary.NativeEndian.Uint16(b) != AF_IB {
		return gid, 0, 0, false
	}
	copy(gid[:], b[offIBGID:])
	return gid, binary.BigEndian.Uint16(b[offIBPKey:]), binary.BigEndian.Uint64(b[offIBSID:]), true
}
