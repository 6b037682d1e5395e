package cmnode

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
)

// AddrHints are the rdma_addrinfo hints the examples pass to common.c's
// get_rdma_addr.
type AddrHints struct {
	Port    string // the service; "" for none (port 0)
	Numeric bool   // RAI_NUMERICHOST (-f ip, -f ipv6)
	IB      bool   // AF_IB (-f gid)
}

// Lookup is rdma_getaddrinfo for one host with the hints: a passive
// lookup of "" is the IPv4 wildcard, an active one ::1. Its failure is a
// getaddrinfo code and text.
func (h AddrHints) Lookup(host string, passive bool) (netip.AddrPort, *LookupError) {
	var port uint64
	if h.Port != "" {
		var err error
		if port, err = strconv.ParseUint(h.Port, 10, 16); err != nil {
			return netip.AddrPort{}, &LookupError{Host: host, Code: -8, Text: "Servname not supported for ai_socktype"} // EAI_SERVICE
		}
	}
	if host == "" {
		if passive {
			return netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(port)), nil
		}
		return netip.AddrPortFrom(netip.IPv6Loopback(), uint16(port)), nil
	}
	if h.IB {
		// AF_IB addresses are not implemented.
		return netip.AddrPort{}, &LookupError{Host: host, Code: -6, Text: "ai_family not supported"} // EAI_FAMILY
	}
	if h.Numeric {
		a, err := netip.ParseAddr(host)
		if err != nil {
			e := errNoName
			e.Host = host
			return netip.AddrPort{}, &e
		}
		return netip.AddrPortFrom(a, uint16(port)), nil
	}
	a, err := Lookup(host)
	if err != nil {
		return netip.AddrPort{}, err.(*LookupError)
	}
	return netip.AddrPortFrom(a, uint16(port)), nil
}

// GetRDMAAddr is get_rdma_addr: a server's bind address (src, with the
// port), or a client's source (src when given, port 0) and destination.
func (h AddrHints) GetRDMAAddr(src, dst string, passive bool) (srcAP, dstAP netip.AddrPort, err *LookupError) {
	if passive {
		srcAP, err = h.Lookup(src, true)
		return srcAP, netip.AddrPort{}, err
	}
	if src != "" {
		a, err := h.Lookup(src, true)
		if err != nil {
			return netip.AddrPort{}, netip.AddrPort{}, err
		}
		srcAP = netip.AddrPortFrom(a.Addr(), 0)
	}
	dstAP, err = h.Lookup(dst, false)
	return srcAP, dstAP, err
}

// SetFormat is the examples' -f option: "ip..." (ip, ipv6) asks for
// numeric hosts, "gid" for AF_IB ones, "name" for names (the default);
// anything else is warned about on stderr. Letters match in any case.
func (h *AddrHints) SetFormat(arg string, stderr io.Writer) {
	switch {
	case cflags.HasPrefixFold(arg, "ip"):
		h.Numeric = true
	case cflags.HasPrefixFold(arg, "gid"):
		h.Numeric, h.IB = true, true
	case !cflags.HasPrefixFold(arg, "name"):
		fmt.Fprintf(stderr, "Warning: unknown address format\n")
	}
}
