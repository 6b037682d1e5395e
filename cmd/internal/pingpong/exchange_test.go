package pingpong

import (
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

func TestWireGID(t *testing.T) {
	g, err := ib.ParseGID("fe80::a8bb:ccff:fedd:eeff")
	if err != nil {
		t.Fatal(err)
	}
	// rdma-core's gid_to_wire_gid: big-endian words as %08x.
	if got, want := wireGID(g), "fe80000000000000a8bbccfffeddeeff"; got != want {
		t.Fatalf("wireGID = %s, want %s", got, want)
	}
	d := dest{lid: 0x12, qpn: 0x345, psn: 0xabcdef, gid: g}
	msg := d.encode()
	if len(msg) != msgLen || string(msg[:msgLen-1]) != "0012:000345:abcdef:fe80000000000000a8bbccfffeddeeff" || msg[msgLen-1] != 0 {
		t.Fatalf("encode = %q", msg)
	}
	if got := decode(msg); got != d {
		t.Fatalf("decode(encode(%+v)) = %+v", d, got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("0012:000345:abcdef:fe80000000000000a8bbccfffeddeeff\x00"))
	f.Add([]byte("zz:"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := decode(b)
		if d2 := decode(d.encode()); d2 != d && d.lid <= 0xffff && d.qpn <= 0xffffff && d.psn <= 0xffffff {
			t.Fatalf("%+v re-decodes as %+v", d, d2)
		}
	})
}
