package nldev

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// decodeSockaddr reads the struct __kernel_sockaddr_storage of
// RDMA_NLDEV_ATTR_RES_SRC_ADDR/DST_ADDR: it returns the address family and,
// for AF_INET and AF_INET6, the address and port (an IPv6 scope id becomes
// the address's zone). Other families (AF_IB) give an invalid AddrPort.
func decodeSockaddr(b []byte) (uint16, netip.AddrPort) {
	if len(b) < 2 {
		return 0, netip.AddrPort{}
	}
	family := binary.NativeEndian.Uint16(b)
	switch family {
	case nlabi.AF_INET:
		if len(b) < nlabi.SockaddrIn4Offset+4 {
			return family, netip.AddrPort{}
		}
		port := binary.BigEndian.Uint16(b[nlabi.SockaddrPortOffset:])
		a := netip.AddrFrom4([4]byte(b[nlabi.SockaddrIn4Offset : nlabi.SockaddrIn4Offset+4]))
		return family, netip.AddrPortFrom(a, port)
	case nlabi.AF_INET6:
		if len(b) < nlabi.SockaddrScopeOffset+4 {
			return family, netip.AddrPort{}
		}
		port := binary.BigEndian.Uint16(b[nlabi.SockaddrPortOffset:])
		a := netip.AddrFrom16([16]byte(b[nlabi.SockaddrIn6Offset : nlabi.SockaddrIn6Offset+16]))
		if scope := binary.NativeEndian.Uint32(b[nlabi.SockaddrScopeOffset:]); scope != 0 {
			a = a.WithZone(strconv.FormatUint(uint64(scope), 10))
		}
		return family, netip.AddrPortFrom(a, port)
	}
	return family, netip.AddrPort{}
}
