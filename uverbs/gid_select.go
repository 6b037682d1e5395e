package uverbs

import (
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// FindGID returns the RoCE v2 entry of port's GID table that carries addr
// (an IPv4 address appears as ::ffff:a.b.c.d, as RoCE stores it). No such
// entry gives an error matching os.ErrNotExist.
func (c *Context) FindGID(port int, addr netip.Addr) (GIDEntry, error) {
	return c.FindGIDOfType(port, addr, ib.GIDTypeRoCEv2)
}

// FindGIDOfType is FindGID for entries of type typ (RoCE v1 for a peer
// that speaks only v1; IB on an InfiniBand port).
func (c *Context) FindGIDOfType(port int, addr netip.Addr, typ ib.GIDType) (GIDEntry, error) {
	want := ib.GID(addr.As16())
	return c.findGID(fmt.Sprintf("find gid %v (%v) on port %d", addr, typ, port), port, typ, func(e GIDEntry) bool {
		return e.GID == want
	})
}

// FindNetdevGID returns the RoCE v2 entry of port's GID table that
// belongs to the network device called netdev, preferring one that
// carries an IPv4 address, then any other but the link-local (fe80::)
// entry, then that: the order in which a RoCE program picks a GID index
// for an interface. No such entry gives an error matching os.ErrNotExist.
func (c *Context) FindNetdevGID(port int, netdev string) (GIDEntry, error) {
	return c.FindNetdevGIDOfType(port, netdev, ib.GIDTypeRoCEv2)
}

// FindNetdevGIDOfType is FindNetdevGID for entries of type typ.
func (c *Context) FindNetdevGIDOfType(port int, netdev string, typ ib.GIDType) (GIDEntry, error) {
	op := fmt.Sprintf("find gid of %s (%v) on port %d", netdev, typ, port)
	ifi, err := net.InterfaceByName(netdev)
	if err != nil {
		return GIDEntry{}, wrap(c.dev.Name, op, fmt.Errorf("%w: %w", err, unix.ENODEV))
	}
	for _, pick := range []func(GIDEntry) bool{
		func(e GIDEntry) bool { return e.GID.Addr().Unmap().Is4() },
		func(e GIDEntry) bool { return !e.GID.Addr().IsLinkLocalUnicast() },
		func(GIDEntry) bool { return true },
	} {
		e, err := c.findGID(op, port, typ, func(e GIDEntry) bool { return int(e.NetdevIndex) == ifi.Index && pick(e) })
		if err == nil || !isNotExist(err) {
			return e, err
		}
	}
	return GIDEntry{}, wrap(c.dev.Name, op, unix.ENOENT)
}

func (c *Context) findGID(op string, port int, typ ib.GIDType, match func(GIDEntry) bool) (GIDEntry, error) {
	table, err := c.QueryGIDTable()
	if err != nil {
		return GIDEntry{}, err
	}
	for _, e := range table {
		if int(e.Port) == port && e.Type == typ && match(e) {
			return e, nil
		}
	}
	return GIDEntry{}, wrap(c.dev.Name, op, unix.ENOENT)
}

func isNotExist(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Err == unix.ENOENT
}
