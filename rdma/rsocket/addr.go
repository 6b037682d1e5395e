package rsocket

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"golang.org/x/sys/unix"
)

// errInvalid is the cause of a bad argument.
var errInvalid = unix.EINVAL

// Addr is the address of an rsocket-compatible connection (Conn,
// Listener): an IP address and a port in rdma_cm's TCP port space. Make
// one with AddrFromAddrPort; the zero Addr is no address. Both Addr and
// *Addr are net.Addrs; Conn and Listener return *Addr. An IPv6
// link-local address carries its zone, as package net's do: Dial and
// Listen take an interface's name or index ("[fe80::1%veth0]:7471"), and
// LocalAddr, RemoteAddr and Addr report the name.
type Addr struct {
	ap netip.AddrPort
}

// AddrFromAddrPort is the Addr of ap (an IPv4-mapped IPv6 address is
// kept as it is given).
func AddrFromAddrPort(ap netip.AddrPort) *Addr { return &Addr{ap} }

// AddrPort is the address and port.
func (a Addr) AddrPort() netip.AddrPort { return a.ap }

// Network is "rdma".
func (a Addr) Network() string { return "rdma" }

// String is the address as "ip:port".
func (a Addr) String() string { return a.ap.String() }

// parseNetwork checks the network name Dial and Listen take.
func parseNetwork(network string) error {
	switch network {
	case "rdma", "rdma4", "rdma6":
		return nil
	}
	return net.UnknownNetworkError(network)
}

// resolveRS resolves "host:port" for network into the addresses to try,
// in the resolver's order, keeping only the address family rdma4 or rdma6
// asks for. An empty host is the unspecified address of the network's
// family (IPv4 for "rdma").
func resolveRS(ctx context.Context, network, address string) ([]netip.AddrPort, error) {
	if err := parseNetwork(network); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, errInvalid)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, &net.AddrError{Err: "invalid port", Addr: address}
	}
	var ips []netip.Addr
	switch a, err := netip.ParseAddr(host); {
	case host == "" && network == "rdma6":
		ips = []netip.Addr{netip.IPv6Unspecified()}
	case host == "":
		ips = []netip.Addr{netip.IPv4Unspecified()}
	case err == nil:
		ips = []netip.Addr{a}
	default:
		lookup := map[string]string{"rdma": "ip", "rdma4": "ip4", "rdma6": "ip6"}[network]
		if ips, err = net.DefaultResolver.LookupNetIP(ctx, lookup, host); err != nil {
			return nil, err
		}
	}
	var aps []netip.AddrPort
	for _, a := range ips {
		if a.Is4In6() {
			a = a.Unmap()
		}
		if (network == "rdma4" && !a.Is4()) || (network == "rdma6" && !a.Is6()) {
			continue
		}
		aps = append(aps, netip.AddrPortFrom(a, uint16(p)))
	}
	if len(aps) == 0 {
		want := map[string]string{"rdma4": "IPv4", "rdma6": "IPv6"}[network]
		return nil, &net.AddrError{Err: "no " + want + " address", Addr: address}
	}
	return aps, nil
}

// addrPortOf is the address and port of a net.Addr given as a Dialer's
// LocalAddr.
func addrPortOf(a net.Addr) (netip.AddrPort, error) {
	switch a := a.(type) {
	case nil:
		return netip.AddrPort{}, nil
	case *Addr:
		return a.ap, nil
	case Addr:
		return a.ap, nil
	case *net.TCPAddr:
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	return netip.AddrPort{}, fmt.Errorf("local address %v (%T): want *rsocket.Addr: %w", a, a, errInvalid)
}
