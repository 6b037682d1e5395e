package uverbs

import (
	"encoding/hex"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// grhFixture reads testdata/grh-<name>: hex words, '#' comment lines
// (files, not a directory: the directories are kernels' fixtures).
func grhFixture(t *testing.T, name string) []byte {
	t.Helper()
	s, err := os.ReadFile(filepath.Join("testdata", "grh-"+name))
	if err != nil {
		t.Fatal(err)
	}
	var h strings.Builder
	for _, line := range strings.Split(string(s), "\n") {
		if !strings.HasPrefix(line, "#") {
			h.WriteString(strings.Join(strings.Fields(line), ""))
		}
	}
	b, err := hex.DecodeString(h.String())
	if err != nil || len(b) != GRHLen {
		t.Fatalf("%s: %d bytes, %v", name, len(b), err)
	}
	return b
}

func gid(s string) ib.GID { return ib.GID(netip.MustParseAddr(s).As16()) }

// TestAHAttrFromWC: the reply address ibv_init_ah_from_wc builds from a
// receive completion and the GRH before the datagram, for RoCE v2 over
// IPv4 and IPv6 and RoCE v1, and the headers it refuses.
func TestAHAttrFromWC(t *testing.T) {
	wc := &WC{Flags: WCWithGRH | WCWithImm, SLID: 0x11, SL: 3, DLIDPath: 1}
	for _, tc := range []struct {
		fixture  string
		wantGID  ib.GID // the local GID looked up
		wantType []ib.GIDType
		want     AHAttr
	}{
		{"roce2-ipv4.hex", gid("::ffff:10.77.0.1"), []ib.GIDType{ib.GIDTypeRoCEv2},
			AHAttr{IsGlobal: true, DGID: gid("::ffff:10.77.0.2"), SGIDIndex: 7, HopLimit: 63, TrafficClass: 0x28,
				DLID: 0x11, SL: 3, SrcPathBits: 1, Port: 1}},
		{"roce2-ipv6.hex", gid("fe80::1"), []ib.GIDType{ib.GIDTypeRoCEv2},
			AHAttr{IsGlobal: true, DGID: gid("fe80::2"), FlowLabel: 0x34567, SGIDIndex: 7, HopLimit: 0x40, TrafficClass: 0x12,
				DLID: 0x11, SL: 3, SrcPathBits: 1, Port: 1}},
		{"roce1.hex", gid("fe80::1"), []ib.GIDType{ib.GIDTypeIB, ib.GIDTypeRoCEv1},
			AHAttr{IsGlobal: true, DGID: gid("fe80::2"), SGIDIndex: 7, HopLimit: 0xff, DLID: 0x11, SL: 3, SrcPathBits: 1, Port: 1}},
	} {
		var gotGID ib.GID
		var gotType []ib.GIDType
		find := func(port uint8, g ib.GID, typs []ib.GIDType) (uint8, error) {
			if port != 1 {
				t.Errorf("%s: looked up on port %d", tc.fixture, port)
			}
			gotGID, gotType = g, typs
			return 7, nil
		}
		a, err := ahAttrFromWC(1, wc, grhFixture(t, tc.fixture), find)
		if err != nil {
			t.Errorf("%s: %v", tc.fixture, err)
			continue
		}
		if a != tc.want || gotGID != tc.wantGID || !reflect.DeepEqual(gotType, tc.wantType) {
			t.Errorf("%s: %+v (looked up %v %v), want %+v (%v %v)", tc.fixture, a, gotGID, gotType, tc.want, tc.wantGID, tc.wantType)
		}
	}

	noLookup := func(uint8, ib.GID, []ib.GIDType) (uint8, error) {
		t.Error("looked up a GID")
		return 0, nil
	}
	// Without WCWithGRH only the completion counts (IB without a GRH).
	a, err := ahAttrFromWC(2, &WC{SLID: 5}, grhFixture(t, "roce2-ipv6.hex"), noLookup)
	if want := (AHAttr{DLID: 5, FlowLabel: 0x34567, Port: 2}); err != nil || a != want {
		t.Errorf("no GRH: %+v, %v; want %+v", a, err, want)
	}

	v6 := grhFixture(t, "roce2-ipv6.hex")
	mcast6 := append([]byte(nil), v6...)
	mcast6[24] = 0xff
	tcp := append([]byte(nil), v6...)
	tcp[6] = unix.IPPROTO_TCP
	zero := make([]byte, GRHLen)
	for name, grh := range map[string][]byte{
		"ipv4 multicast": grhFixture(t, "ipv4-multicast.hex"),
		"ipv6 multicast": mcast6,
		"next header":    tcp,
		"version 0":      zero,
		"short":          v6[:39],
	} {
		if _, err := ahAttrFromWC(1, wc, grh, noLookup); !errors.Is(err, ErrBadGRH) {
			t.Errorf("%s: %v, want ErrBadGRH", name, err)
		}
	}

	// A failed lookup is the call's error.
	notFound := func(uint8, ib.GID, []ib.GIDType) (uint8, error) { return 0, wrap("rxe0", "find gid", unix.ENOENT) }
	if _, err := ahAttrFromWC(1, wc, v6, notFound); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unknown local GID: %v", err)
	}
}

// TestIPVersion: an IPv6 GRH whose last 20 bytes look like an IPv4
// header with IHL 5 is IPv4 only if that header's checksum is right.
func TestIPVersion(t *testing.T) {
	v4 := grhFixture(t, "roce2-ipv4.hex")
	g := append([]byte(nil), v4...)
	g[0] = 0x60
	if v := ipVersion(g); v != 4 {
		t.Errorf("version 6 word, good IPv4 header: %d, want 4", v)
	}
	g[31]++ // the checksum
	if v := ipVersion(g); v != 6 {
		t.Errorf("version 6 word, bad checksum: %d, want 6", v)
	}
	if c := ipv4Checksum(v4[20:]); c != 0x1461 {
		t.Errorf("checksum %#x, want 0x1461", c)
	}
}
