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

func TestParse(t *testing.T) {
	c, err := Parse(RC, []string{"-s64", "-n", "0x10", "--iters=20", "-ec", "--gid", "1", "-m", "2048", "host"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Size != 64 || c.Iters != 20 || !c.Events || !c.Validate || c.GIDIndex != 1 || c.MTU != ib.MTU2048 || c.Server != "host" {
		t.Fatalf("%+v", c)
	}
	c, err = Parse(UD, nil)
	if err != nil || c.Size != 1024 || c.Port != 18515 || c.RxDepth != 500 || c.GIDIndex != -1 {
		t.Fatalf("UD defaults: %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-h"}, {"-m", "1000"}, {"-p", "70000"}, {"-i", "0"}, {"a", "b"}, {"-s"}, {"--nosuch"}, {"-m", "1024"}} {
		kind := RC
		if bad[0] == "-m" && bad[1] == "1024" {
			kind = UD // ud_pingpong has no -m
		}
		if _, err := Parse(kind, bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestStrtol(t *testing.T) {
	for s, want := range map[string]int64{"12": 12, "0x1f": 31, "010": 8, "-3": -3, "7z": 7, "": 0, "x": 0} {
		if got := strtol(s); got != want {
			t.Errorf("strtol(%q) = %d, want %d", s, got, want)
		}
	}
}
