package ucma

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
)

// TestSockaddrIn6Bytes checks a sockaddr_in6 byte for byte against
// linux/in6.h: sin6_family (host order), sin6_port and sin6_flowinfo
// (network order), sin6_addr, sin6_scope_id (host order) at offset 24.
func TestSockaddrIn6Bytes(t *testing.T) {
	for _, c := range []struct {
		in    string
		scope uint32
	}{
		{"[fe80::1:2%3]:7471", 3},
		{"[fe80::1%4294967295]:1", 0xffffffff},
		{"[fd77::1]:65535", 0},
	} {
		ap := netip.MustParseAddrPort(c.in)
		var ss SockaddrStorage
		if n := PutSockaddr(&ss, ap); n != SizeofSockaddrIn6 {
			t.Fatalf("%s: size %d", c.in, n)
		}
		want := make([]byte, SizeofSockaddrIn6)
		binary.NativeEndian.PutUint16(want, AF_INET6)
		binary.BigEndian.PutUint16(want[2:], ap.Port())
		a := ap.Addr().As16()
		copy(want[8:], a[:])
		binary.NativeEndian.PutUint32(want[24:], c.scope)
		if !bytes.Equal(ss[:SizeofSockaddrIn6], want) || !bytes.Equal(ss[SizeofSockaddrIn6:], make([]byte, len(ss)-SizeofSockaddrIn6)) {
			t.Errorf("%s:\n got % x\nwant % x", c.in, ss[:SizeofSockaddrIn6], want)
		}
		if _, back := Sockaddr(ss[:SizeofSockaddrIn6]); back != ap {
			t.Errorf("%s: read back as %v", c.in, back)
		}
	}
}

// TestSockaddrNamedZone: a zone that is not a number is refused (the
// caller resolves names), never written as scope id 0.
func TestSockaddrNamedZone(t *testing.T) {
	var ss SockaddrStorage
	ss[0] = 0xaa
	for _, s := range []string{"[fe80::1%veth0]:1", "[fe80::1%-1]:1", "[fe80::1%4294967296]:1"} {
		if n := PutSockaddr(&ss, netip.MustParseAddrPort(s)); n != 0 {
			t.Errorf("%s: size %d, want 0", s, n)
		}
	}
}
