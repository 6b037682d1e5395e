package rsock

import (
	"net"
	"net/netip"
	"strconv"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// errService is getaddrinfo's EAI_SERVICE with glibc's text.
var errService = cmnode.LookupError{Code: -8, Text: "Servname not supported for ai_socktype"}

// Resolve is getaddrinfo(host, port) as the programs call it, giving
// the first address as "ip:port": host "" with passive is the IPv4
// wildcard (glibc's first answer for AI_PASSIVE), numeric refuses names
// (AI_NUMERICHOST), and port is a number or a service of
// /etc/services. A failure is a *cmnode.LookupError with getaddrinfo's
// code and text.
func Resolve(host, port string, passive, numeric bool) (string, error) {
	p, err := lookupPort(port)
	if err != nil {
		return "", err
	}
	var a netip.Addr
	switch {
	case host == "" && passive:
		a = netip.IPv4Unspecified()
	case numeric:
		if a, err = netip.ParseAddr(host); err != nil {
			return "", &cmnode.LookupError{Host: host, Code: -2, Text: "Name or service not known"}
		}
	default:
		if a, err = cmnode.Lookup(host); err != nil {
			return "", err
		}
	}
	return netip.AddrPortFrom(a, p).String(), nil
}

func lookupPort(port string) (uint16, error) {
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		return uint16(n), nil
	}
	n, err := net.LookupPort("tcp", port)
	if err != nil || port == "" {
		e := errService
		e.Host = port
		return 0, &e
	}
	return uint16(n), nil
}
