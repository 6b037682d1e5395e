package rdma

import (
	"encoding/binary"
	"errors"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/ib"
)

// pathRecordFixture is an SA PathRecord laid out by hand from IBA vol. 1
// table 15.2.5.16 (byte offsets), independent of ucma's struct.
func pathRecordFixture() []byte {
	b := make([]byte, 64)
	be := binary.BigEndian
	be.PutUint64(b[0:], 0x0000000001060000|7471) // TCP port space, port 7471
	copy(b[8:], []byte{0: 0, 10: 0xff, 11: 0xff, 12: 10, 13: 77, 14: 0, 15: 2})
	copy(b[24:], []byte{0: 0, 10: 0xff, 11: 0xff, 12: 10, 13: 77, 14: 0, 15: 1})
	be.PutUint16(b[40:], 0x0011)                // DLID
	be.PutUint16(b[42:], 0x0022)                // SLID
	be.PutUint32(b[44:], 1<<31|0xABCDE<<8|0x40) // raw traffic, flow label, hop limit
	b[48] = 0x6a                                // traffic class
	b[49] = 0x80 | 0x05                         // reversible, numb path 5
	be.PutUint16(b[50:], 0xffff)                // P_Key
	be.PutUint16(b[52:], 0x123<<4|0x7)          // QoS class, SL
	b[54] = 2<<6 | 3                            // MTU exactly 1024
	b[55] = 2<<6 | 7                            // rate exactly 40 Gb/s
	b[56] = 2<<6 | 18                           // packet lifetime exactly 2^18
	b[57] = 9                                   // preference
	return b
}

func TestDecodeQueryPath(t *testing.T) {
	resp := make([]byte, 8+3*72)
	binary.NativeEndian.PutUint32(resp[0:], 1)    // num_paths
	binary.NativeEndian.PutUint32(resp[8:], 0x2b) // GMP|PRIMARY|BIDIRECTIONAL
	copy(resp[16:], pathRecordFixture())
	got, err := decodeQueryPath(resp)
	if err != nil {
		t.Fatal(err)
	}
	want := []Path{{
		Flags: PathGMP | PathPrimary | PathBidirectional,
		Record: PathRecord{
			ServiceID: 0x0000000001060000 | 7471,
			DGID:      ib.GID{10: 0xff, 11: 0xff, 12: 10, 13: 77, 14: 0, 15: 2},
			SGID:      ib.GID{10: 0xff, 11: 0xff, 12: 10, 13: 77, 14: 0, 15: 1},
			DLID:      0x11, SLID: 0x22,
			RawTraffic: true, FlowLabel: 0xABCDE, HopLimit: 0x40, TrafficClass: 0x6a,
			Reversible: true, NumbPath: 5, PKey: 0xffff, QoSClass: 0x123, SL: 7,
			MTUSelector: 2, MTU: ib.MTU(3), RateSelector: 2, Rate: 7,
			LifeSelector: 2, PacketLifeTime: 18, Preference: 9,
		},
	}}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("decodeQueryPath (-want +got):\n%s", d)
	}
	if s := got[0].Flags.String(); s != "gmp|primary|outbound|inbound_reverse" {
		t.Errorf("flags = %q", s)
	}
}

// TestDecodeQueryPathCount: the kernel fills a record only while more
// than one record's room remains, so a count beyond that is cut.
func TestDecodeQueryPathCount(t *testing.T) {
	for _, tc := range []struct {
		size, count, want int
	}{
		{8 + 72 + 1, 6, 1},
		{8 + 2*72, 6, 1},
		{8 + 7*72, 6, 6},
		{8 + 7*72, 0, 0},
		{8 + 7*72, 1 << 31, 6},
	} {
		b := make([]byte, tc.size)
		binary.NativeEndian.PutUint32(b, uint32(tc.count))
		got, err := decodeQueryPath(b)
		if err != nil || len(got) != tc.want {
			t.Errorf("size %d count %d: %d paths, %v; want %d", tc.size, tc.count, len(got), err, tc.want)
		}
	}
	if _, err := decodeQueryPath(make([]byte, 8+71)); !errors.Is(err, errInvalid) {
		t.Errorf("short response: %v, want errInvalid", err)
	}
}

func TestPathFlagsString(t *testing.T) {
	for f, want := range map[PathFlags]string{0: "0x0", PathAlternate: "alternate", PathInbound | 0x100: "inbound|0x100"} {
		if got := f.String(); got != want {
			t.Errorf("PathFlags(%#x) = %q, want %q", uint32(f), got, want)
		}
	}
}

func FuzzDecodeQueryPath(f *testing.F) {
	resp := make([]byte, 8+2*72)
	resp[0] = 1
	copy(resp[16:], pathRecordFixture())
	f.Add(resp)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		paths, err := decodeQueryPath(b)
		if err != nil {
			return
		}
		if len(paths) > (len(b)-8)/72 {
			t.Fatalf("%d paths from %d bytes", len(paths), len(b))
		}
		for _, p := range paths {
			if p.Record.FlowLabel > 0xFFFFF || p.Record.SL > 15 || p.Record.MTU > 0x3F || p.Record.NumbPath > 0x7F {
				t.Fatalf("field out of range: %+v", p.Record)
			}
		}
	})
}
