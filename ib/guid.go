package ib

import (
	"encoding/binary"
	"fmt"
)

// GUID is a 64-bit globally unique identifier (IBTA: EUI-64), stored in
// network byte order, as it travels on the wire and in uverbs structures
// (__be64 in ib_user_verbs.h).
type GUID [8]byte

// GUIDFromUint64 returns the GUID whose big-endian value is v. RDMA
// netlink carries GUIDs as host-order u64 values derived from the
// big-endian GUID (be64_to_cpu in the kernel's nldev.c), so this is the
// conversion for RDMA_NLDEV_ATTR_NODE_GUID and _SYS_IMAGE_GUID.
func GUIDFromUint64(v uint64) GUID {
	var g GUID
	binary.BigEndian.PutUint64(g[:], v)
	return g
}

// Uint64 returns the GUID as a number, most significant byte first.
func (g GUID) Uint64() uint64 { return binary.BigEndian.Uint64(g[:]) }

// IsZero reports whether every byte of the GUID is zero.
func (g GUID) IsZero() bool { return g == GUID{} }

// String formats the GUID as iproute2 and rdma-core do: four groups of
// four lowercase hex digits, most significant first ("0250:56ff:fe8a:1b2c").
func (g GUID) String() string {
	return fmt.Sprintf("%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7])
}

// MarshalText implements encoding.TextMarshaler with the String form.
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses the String form. It also accepts the 16 hex
// digits without separators that sysfs-like sources sometimes use.
func (g *GUID) UnmarshalText(b []byte) error {
	p, err := ParseGUID(string(b))
	if err != nil {
		return err
	}
	*g = p
	return nil
}

// ParseGUID parses "xxxx:xxxx:xxxx:xxxx" (the form String prints and
// /sys/class/infiniband/*/node_guid holds) or 16 bare hex digits.
func ParseGUID(s string) (GUID, error) {
	var g GUID
	digits := make([]byte, 0, 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ':' {
			if i%5 != 4 || len(s) != 19 {
				return GUID{}, fmt.Errorf("ib: invalid GUID %q", s)
			}
			continue
		}
		if len(s) == 19 && i%5 == 4 {
			return GUID{}, fmt.Errorf("ib: invalid GUID %q", s)
		}
		digits = append(digits, c)
	}
	if len(digits) != 16 || (len(s) != 16 && len(s) != 19) {
		return GUID{}, fmt.Errorf("ib: invalid GUID %q: want xxxx:xxxx:xxxx:xxxx", s)
	}
	for i := range g {
		hi, ok1 := unhex(digits[2*i])
		lo, ok2 := unhex(digits[2*i+1])
		if !ok1 || !ok2 {
			return GUID{}, fmt.Errorf("ib: invalid GUID %q: not hexadecimal", s)
		}
		g[i] = hi<<4 | lo
	}
	return g, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
