package rdma

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// Addr is the address of an rsocket-compatible connection (Conn,
// Listener): an IP address and a port in rdma_cm's TCP port space. Both
// Addr and *Addr are net.Addrs; Conn and Listener return *Addr.
type Addr struct {
	netip.AddrPort
}

// Network is "rdma".
func (a Addr) Network() string { return "rdma" }

// String is the address as "ip:port".
func (a Addr) String() string { return a.AddrPort.String() }

// parseNetwork checks the network name Dial and Listen take.
func parseNetwork(network string) error {
	switch network {
	case "rdma", "rdma4", "rdma6":
		return nil
	}
	return net.UnknownNetworkError(network)
}

// resolveRS resolves "host:port" for network, keeping only the address
// family rdma4 or rdma6 asks for.
func resolveRS(ctx context.Context, network, address string) (netip.AddrPort, error) {
	if err := parseNetwork(network); err != nil {
		return netip.AddrPort{}, err
	}
	ap, err := resolveEP(ctx, address)
	if err != nil {
		return netip.AddrPort{}, err
	}
	a := ap.Addr()
	if a.Is4In6() {
		a = a.Unmap()
	}
	switch {
	case network == "rdma4" && !a.Is4():
		return netip.AddrPort{}, &net.AddrError{Err: "not an IPv4 address", Addr: address}
	case network == "rdma6" && !a.Is6():
		return netip.AddrPort{}, &net.AddrError{Err: "not an IPv6 address", Addr: address}
	}
	return netip.AddrPortFrom(a, ap.Port()), nil
}

// addrPortOf is the address and port of a net.Addr given as a Dialer's
// LocalAddr.
func addrPortOf(a net.Addr) (netip.AddrPort, error) {
	switch a := a.(type) {
	case nil:
		return netip.AddrPort{}, nil
	case *Addr:
		return a.AddrPort, nil
	case Addr:
		return a.AddrPort, nil
	case *net.TCPAddr:
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	return netip.AddrPort{}, fmt.Errorf("local address %v (%T): want *rdma.Addr: %w", a, a, errInvalid)
}
