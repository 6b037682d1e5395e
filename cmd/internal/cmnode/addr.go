package cmnode

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
)

// LookupError is a failed lookup as getaddrinfo reports it: Code is
// its EAI_* value (negative), Error gai_strerror's text.
type LookupError struct {
	Host string
	Code int
	Text string
}

func (e *LookupError) Error() string { return e.Text }

// getaddrinfo's codes and glibc's texts for them.
var (
	errNoName = LookupError{Code: -2, Text: "Name or service not known"}            // EAI_NONAME
	errAgain  = LookupError{Code: -3, Text: "Temporary failure in name resolution"} // EAI_AGAIN
)

// Lookup resolves host as getaddrinfo(host, NULL, NULL) does for these
// programs: a numeric IPv4 or IPv6 address (an IPv4-mapped IPv6 one
// stays IPv6), else the first address of the name.
func Lookup(host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, nil
	}
	if host == "" || strings.ContainsAny(host, " \t%") {
		e := errNoName
		e.Host = host
		return netip.Addr{}, &e
	}
	addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil || len(addrs) == 0 {
		e := errNoName
		var de *net.DNSError
		if errors.As(err, &de) && de.IsTemporary {
			e = errAgain
		}
		e.Host = host
		return netip.Addr{}, &e
	}
	// Prefer IPv4, as glibc's default address sorting does for a name
	// with both and no IPv6 route.
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	return addrs[0], nil
}
