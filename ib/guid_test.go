package ib

import (
	"testing"
	"unsafe"
)

func TestGUIDString(t *testing.T) {
	g := GUIDFromUint64(0x025056fffe8a1b2c)
	if got, want := g.String(), "0250:56ff:fe8a:1b2c"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if g[0] != 0x02 || g[7] != 0x2c {
		t.Fatalf("GUID bytes %x are not in network order", g[:])
	}
	if g.Uint64() != 0x025056fffe8a1b2c {
		t.Fatalf("Uint64() = %#x", g.Uint64())
	}
	if unsafe.Sizeof(g) != 8 {
		t.Fatalf("GUID is %d bytes, want 8 (__be64)", unsafe.Sizeof(g))
	}
}

func TestParseGUID(t *testing.T) {
	for _, s := range []string{"0250:56ff:fe8a:1b2c", "025056fffe8a1b2c", "0250:56FF:FE8A:1B2C"} {
		g, err := ParseGUID(s)
		if err != nil || g != GUIDFromUint64(0x025056fffe8a1b2c) {
			t.Errorf("ParseGUID(%q) = %v, %v", s, g, err)
		}
	}
	for _, s := range []string{"", "0250:56ff:fe8a:1b2", "0250:56ff:fe8a:1b2cc", "02505:6ff:fe8a:1b2c", "zz50:56ff:fe8a:1b2c", "0250-56ff-fe8a-1b2c"} {
		if g, err := ParseGUID(s); err == nil {
			t.Errorf("ParseGUID(%q) = %v, want an error", s, g)
		}
	}
}

func TestNodeTypeString(t *testing.T) {
	for nt, want := range map[NodeType]string{NodeCA: "ca", NodeRNIC: "rnic", NodeUnspecified: "unspecified", 0: "unknown", 42: "unknown"} {
		if got := nt.String(); got != want {
			t.Errorf("NodeType(%d).String() = %q, want %q", nt, got, want)
		}
	}
}

func FuzzParseGUID(f *testing.F) {
	f.Add("0250:56ff:fe8a:1b2c")
	f.Add("025056fffe8a1b2c")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGUID(s)
		if err != nil {
			return
		}
		if back, err := ParseGUID(g.String()); err != nil || back != g {
			t.Fatalf("round trip of %q: %v, %v", s, back, err)
		}
	})
}
