package rdma

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// anInterface is one of the host's network interfaces.
func anInterface(t *testing.T) net.Interface {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		t.Fatalf("interfaces: %v %v", ifs, err)
	}
	return ifs[len(ifs)-1]
}

// TestZoneNameToScope: a named zone becomes its interface's index in
// sockaddr_in6's scope id, byte for byte; a numeric one stays; reading
// the sockaddr back names the zone.
func TestZoneNameToScope(t *testing.T) {
	ifi := anInterface(t)
	for _, zone := range []string{ifi.Name, strconv.Itoa(ifi.Index)} {
		ap := netip.MustParseAddrPort("[fe80::1%" + zone + "]:7471")
		var ss ucma.SockaddrStorage
		n, err := putSockaddr(&ss, ap)
		if err != nil || n != ucma.SizeofSockaddrIn6 {
			t.Fatalf("%v: size %d, %v", ap, n, err)
		}
		if got := binary.NativeEndian.Uint32(ss[24:]); got != uint32(ifi.Index) {
			t.Errorf("%v: scope id %d, want %s's index %d", ap, got, ifi.Name, ifi.Index)
		}
		if fam := binary.NativeEndian.Uint16(ss[:]); fam != ucma.AF_INET6 {
			t.Errorf("%v: family %d", ap, fam)
		}
		want := netip.MustParseAddrPort("[fe80::1%" + ifi.Name + "]:7471")
		if back := sockaddr(ss[:n]); back != want {
			t.Errorf("%v: read back as %v, want %v", ap, back, want)
		}
	}
}

// TestZoneUnknown: a zone that names no interface and is no number is an
// error that names it, matches EINVAL and is a *net.AddrError; an index
// no interface has stays a number both ways (the kernel judges it).
func TestZoneUnknown(t *testing.T) {
	var ss ucma.SockaddrStorage
	for _, s := range []string{"[fe80::1%no-such-if0]:1", "[fe80::1%-3]:1"} {
		n, err := putSockaddr(&ss, netip.MustParseAddrPort(s))
		var ae *net.AddrError
		if n != 0 || !errors.Is(err, unix.EINVAL) || !errors.As(err, &ae) || ae.Addr != netip.MustParseAddrPort(s).Addr().String() || !strings.Contains(err.Error(), "unknown IPv6 zone") {
			t.Errorf("%s: size %d, %v", s, n, err)
		}
	}
	if _, err := putSockaddr(&ss, netip.AddrPort{}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("no address: %v", err)
	}
	// An index no interface has (interface indices are positive ints).
	const idx = 1<<31 + 5
	ap := netip.MustParseAddrPort("[fe80::1%" + strconv.Itoa(idx) + "]:2")
	n, err := putSockaddr(&ss, ap)
	if err != nil || binary.NativeEndian.Uint32(ss[24:]) != idx {
		t.Fatalf("%v: %v, scope %d", ap, err, binary.NativeEndian.Uint32(ss[24:]))
	}
	if back := sockaddr(ss[:n]); back != ap {
		t.Errorf("%v: read back as %v", ap, back)
	}
}

// TestZoneEntryPoints: Bind and ResolveAddr (source and destination)
// refuse an unknown zone before they send anything: a
// closed id would fail with os.ErrClosed otherwise.
func TestZoneEntryPoints(t *testing.T) {
	id := &ID{dead: true}
	bad := netip.MustParseAddrPort("[fe80::1%no-such-if0]:1")
	good := netip.MustParseAddrPort("[fe80::1]:1")
	var ae *net.AddrError
	for name, err := range map[string]error{
		"bind":        id.Bind(bad),
		"resolve dst": id.ResolveAddr(t.Context(), netip.AddrPort{}, bad, 1),
		"resolve src": id.ResolveAddr(t.Context(), bad, good, 1),
	} {
		if !errors.As(err, &ae) || !errors.Is(err, unix.EINVAL) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestZoneLinkLocal: an unzoned link-local source held by one interface
// gets that interface's name, and an unzoned link-local destination the
// same; zoned, global, unknown and IPv4 addresses stay as they are.
func TestZoneLinkLocal(t *testing.T) {
	global := netip.MustParseAddrPort("[fd77::1]:1")
	nobody := netip.MustParseAddrPort("[fe80::dead:beef:1:2]:3")
	v4 := netip.MustParseAddrPort("10.77.0.1:4")
	for _, c := range [][2]netip.AddrPort{{global, nobody}, {nobody, nobody}, {v4, v4}, {netip.AddrPort{}, nobody}} {
		if s, d := zoneLinkLocal(c[0], c[1]); s != c[0] || d != c[1] {
			t.Errorf("%v → %v became %v → %v", c[0], c[1], s, d)
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifi := range ifs {
		addrs, _ := ifi.Addrs()
		for _, ia := range addrs {
			p, err := netip.ParsePrefix(ia.String())
			if err != nil || !p.Addr().IsLinkLocalUnicast() || !p.Addr().Is6() || interfaceWith(p.Addr()) != ifi.Name {
				continue
			}
			src := netip.AddrPortFrom(p.Addr(), 5)
			s, d := zoneLinkLocal(src, nobody)
			if s.Addr().Zone() != ifi.Name || s.Addr().WithZone("") != p.Addr() || s.Port() != 5 || d.Addr().Zone() != ifi.Name || d.Port() != nobody.Port() {
				t.Errorf("%v → %v on %s: %v → %v", src, nobody, ifi.Name, s, d)
			}
			zoned := netip.AddrPortFrom(p.Addr().WithZone("x"), 5)
			if s, _ := zoneLinkLocal(zoned, nobody); s != zoned {
				t.Errorf("zoned %v became %v", zoned, s)
			}
			return
		}
	}
	t.Log("no interface has a link-local address of its own: only the unchanged cases ran")
}
