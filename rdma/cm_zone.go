package rdma

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// IPv6 zones, as package net has them: an address that enters package
// rdma may name its zone ("fe80::1%veth0") or give the interface index
// ("fe80::1%3"); the kernel takes the index (sockaddr_in6's scope id).
// An address that comes back from the kernel has its zone named when the
// index is an interface's, in decimal otherwise, as net's addresses do.

// putSockaddr writes ap into s as the command's sockaddr, with its zone
// resolved to an interface index, and returns its size. An address that
// is not an IP address, or has a zone that names no interface and is no
// number, is an error that matches errInvalid and is a *net.AddrError;
// s is then unusable, and nothing has been sent.
func putSockaddr(s *ucma.SockaddrStorage, ap netip.AddrPort) (uint16, error) {
	a := ap.Addr()
	if !a.IsValid() {
		return 0, fmt.Errorf("%w: %w", &net.AddrError{Err: "not an IP address", Addr: ap.String()}, errInvalid)
	}
	if z := a.Zone(); z != "" {
		i, ok := zoneIndex(z)
		if !ok {
			return 0, fmt.Errorf("%w: %w", &net.AddrError{Err: "unknown IPv6 zone", Addr: a.String()}, errInvalid)
		}
		ap = netip.AddrPortFrom(a.WithZone(strconv.FormatUint(uint64(i), 10)), ap.Port())
	}
	n := ucma.PutSockaddr(s, ap)
	if n == 0 {
		return 0, fmt.Errorf("%w: %w", &net.AddrError{Err: "not an IP address", Addr: ap.String()}, errInvalid)
	}
	return n, nil
}

// zoneIndex is the interface index zone names: an interface's name, as
// net looks it up first, else a number.
func zoneIndex(zone string) (uint32, bool) {
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index), true
	}
	n, err := strconv.ParseUint(zone, 10, 32)
	return uint32(n), err == nil
}

// sockaddr reads a sockaddr the kernel wrote, with a scope id as the
// name of its interface (in decimal if none has that index).
func sockaddr(b []byte) netip.AddrPort {
	_, ap := ucma.Sockaddr(b)
	if z := ap.Addr().Zone(); z != "" {
		if i, err := strconv.Atoi(z); err == nil {
			if ifi, err := net.InterfaceByIndex(i); err == nil && ifi.Name != "" {
				ap = netip.AddrPortFrom(ap.Addr().WithZone(ifi.Name), ap.Port())
			}
		}
	}
	return ap
}

// zoneLinkLocal names the zone of a link-local src the kernel reported
// without a scope id (it gives none to the ids a connection request
// makes, on 6.1 and 6.12 alike): the interface that holds src, when
// exactly one does; a link-local dst without one is on the same link and
// gets the same zone. Anything else is returned as it is.
func zoneLinkLocal(src, dst netip.AddrPort) (netip.AddrPort, netip.AddrPort) {
	s := src.Addr()
	if !s.Is6() || !s.IsLinkLocalUnicast() || s.Zone() != "" {
		return src, dst
	}
	zone := interfaceWith(s)
	if zone == "" {
		return src, dst
	}
	src = netip.AddrPortFrom(s.WithZone(zone), src.Port())
	if d := dst.Addr(); d.Is6() && d.IsLinkLocalUnicast() && d.Zone() == "" {
		dst = netip.AddrPortFrom(d.WithZone(zone), dst.Port())
	}
	return src, dst
}

// interfaceWith is the name of the one interface that has the address
// a, or "" if none or several have it.
func interfaceWith(a netip.Addr) string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	found := ""
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, ia := range addrs {
			if p, err := netip.ParsePrefix(ia.String()); err == nil && p.Addr() == a {
				if found != "" {
					return ""
				}
				found = ifi.Name
			}
		}
	}
	return found
}
