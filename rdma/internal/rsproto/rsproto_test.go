package rsproto

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"testing"
)

// connDataFixture is a librdmacm REQ's rs_conn_data as rsocket.c
// formats it on a little-endian host: version 1, IOMAP flag, 384
// credits, target SGL at 0x5555aaaa1000 rkey 0x1234 with 2 entries, data
// buffer at 0x7f0012340000 rkey 0x5678 of 64 KiB.
const connDataFixture = "01020180000000000000" + "5555aaaa1000" + "00001234" + "00000002" +
	"00007f0012340000" + "00005678" + "00010000"

func TestConnDataBytes(t *testing.T) {
	want, err := hex.DecodeString(connDataFixture)
	if err != nil {
		t.Fatal(err)
	}
	c := ConnData{Version: 1, Flags: FlagIOMap, Credits: 384,
		TargetSGL: SGE{Addr: 0x5555aaaa1000, Key: 0x1234, Length: 2},
		DataBuf:   SGE{Addr: 0x7f0012340000, Key: 0x5678, Length: 1 << 16}}
	if got := c.Marshal(); !bytes.Equal(got, want) {
		t.Fatalf("Marshal:\n got %x\nwant %x", got, want)
	}
	// The kernel pads private data: a 196-byte REP area decodes the same.
	padded := append(append([]byte(nil), want...), make([]byte, 196-len(want))...)
	got, err := UnmarshalConnData(padded)
	if err != nil || got != c {
		t.Fatalf("UnmarshalConnData = %+v, %v; want %+v", got, err, c)
	}
	if got.SGEOrder() != binary.LittleEndian {
		t.Fatal("a peer without FlagNet wants little-endian SGEs")
	}
	got.Flags |= FlagNet
	if got.SGEOrder() != binary.BigEndian {
		t.Fatal("a peer with FlagNet wants big-endian SGEs")
	}
}

// TestConnDataPathMTU: our path MTU goes in the first reserved byte,
// which rdma-core zeroes (the fixture above: no MTU said).
func TestConnDataPathMTU(t *testing.T) {
	b, _ := hex.DecodeString(connDataFixture)
	c, err := UnmarshalConnData(b)
	if err != nil || c.PathMTU != 0 {
		t.Fatalf("rdma-core's conn data: path MTU %d, %v; want 0", c.PathMTU, err)
	}
	c.PathMTU = 3 // IB_MTU_1024
	m := c.Marshal()
	want := append([]byte(nil), b...)
	want[4] = 3
	if !bytes.Equal(m, want) {
		t.Fatalf("Marshal with path MTU 3:\n got %x\nwant %x", m, want)
	}
	if got, err := UnmarshalConnData(m); err != nil || got != c {
		t.Fatalf("UnmarshalConnData = %+v, %v; want %+v", got, err, c)
	}
}

func TestConnDataFile(t *testing.T) {
	b, err := os.ReadFile("testdata/conn_data.bin")
	if err != nil {
		t.Fatal(err)
	}
	c, err := UnmarshalConnData(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.Marshal(), b[:ConnDataSize]) {
		t.Fatalf("round trip of the fixture: %x", c.Marshal())
	}
}

func TestConnDataErrors(t *testing.T) {
	good, _ := hex.DecodeString(connDataFixture)
	for name, mut := range map[string]func([]byte) []byte{
		"short":      func(b []byte) []byte { return b[:39] },
		"version 2":  func(b []byte) []byte { b[0] = 2; return b },
		"no credits": func(b []byte) []byte { b[2], b[3] = 0, 0; return b },
		"empty sgl":  func(b []byte) []byte { copy(b[20:24], []byte{0, 0, 0, 0}); return b },
		"empty buf":  func(b []byte) []byte { copy(b[36:40], []byte{0, 0, 0, 0}); return b },
	} {
		b := mut(append([]byte(nil), good...))
		if _, err := UnmarshalConnData(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestSGEBytes(t *testing.T) {
	s := SGE{Addr: 0x0102030405060708, Key: 0x0a0b0c0d, Length: 0x10000}
	for _, c := range []struct {
		o    binary.ByteOrder
		want string
	}{
		{binary.LittleEndian, "0807060504030201" + "0d0c0b0a" + "00000100"},
		{binary.BigEndian, "0102030405060708" + "0a0b0c0d" + "00010000"},
	} {
		b := make([]byte, SGESize)
		s.Put(b, c.o)
		if hex.EncodeToString(b) != c.want {
			t.Errorf("%v: %x, want %s", c.o, b, c.want)
		}
		if got, err := DecodeSGE(b, c.o); err != nil || got != s {
			t.Errorf("%v: DecodeSGE = %+v, %v", c.o, got, err)
		}
	}
	if _, err := DecodeSGE(make([]byte, 15), binary.LittleEndian); !errors.Is(err, ErrMalformed) {
		t.Errorf("short SGE: %v", err)
	}
}

func TestMsg(t *testing.T) {
	for _, c := range []struct {
		m    Msg
		raw  uint32
		op   Op
		data uint32
		str  string
	}{
		{MakeMsg(OpData, 4096), 0x00001000, OpData, 4096, "DATA 4096"},
		{MakeMsg(OpSGL, 384+7), 0x80000187, OpSGL, 391, "SGL 391"},
		{MakeMsg(OpCtrl, uint32(CtrlDisconnect)), 0xe0000000, OpCtrl, 0, "CTRL DISCONNECT"},
		{MakeMsg(OpCtrl, uint32(CtrlShutdown)), 0xe0000002, OpCtrl, 2, "CTRL SHUTDOWN"},
		{MakeMsg(OpIOMapSGL, 3), 0xc0000003, OpIOMapSGL, 3, "IOMAP_SGL 3"},
		{MakeMsg(OpData, 1<<30), 0, OpData, 0, "DATA 0"},
	} {
		if uint32(c.m) != c.raw || c.m.Op() != c.op || c.m.Data() != c.data || c.m.String() != c.str {
			t.Errorf("%#x: %v %d %q; want %#x %v %d %q", uint32(c.m), c.m.Op(), c.m.Data(), c.m, c.raw, c.op, c.data, c.str)
		}
	}
	if Op(9).String() != "Op(9)" || Ctrl(5).String() != "Ctrl(5)" || opReserved1.String() != "RSVD_DATA_MORE" ||
		opReserved3.String() != "RSVD_DRA_MORE" || opReserved5.String() != "RSVD" {
		t.Error("String of reserved or unknown values")
	}
}

func FuzzUnmarshalConnData(f *testing.F) {
	b, _ := hex.DecodeString(connDataFixture)
	f.Add(b)
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := UnmarshalConnData(b)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Marshal(), b[:ConnDataSize]) {
			// reserved bytes are dropped; everything else must round-trip
			m := c.Marshal()
			if !bytes.Equal(m[:5], b[:5]) || !bytes.Equal(m[7:], b[7:ConnDataSize]) {
				t.Fatalf("round trip %x → %x", b[:ConnDataSize], m)
			}
		}
	})
}

func FuzzDecodeSGE(f *testing.F) {
	f.Add(make([]byte, 16), true)
	f.Add([]byte{1, 2, 3}, false)
	f.Fuzz(func(t *testing.T, b []byte, big bool) {
		var o binary.ByteOrder = binary.LittleEndian
		if big {
			o = binary.BigEndian
		}
		s, err := DecodeSGE(b, o)
		if err != nil {
			return
		}
		out := make([]byte, SGESize)
		s.Put(out, o)
		if !bytes.Equal(out, b[:SGESize]) {
			t.Fatalf("round trip %x → %x", b[:SGESize], out)
		}
	})
}

func FuzzMsg(f *testing.F) {
	f.Add(uint32(0xe0000002))
	f.Fuzz(func(t *testing.T, v uint32) {
		m := Msg(v)
		if MakeMsg(m.Op(), m.Data()) != m {
			t.Fatalf("%#x does not round-trip", v)
		}
		_ = m.String()
	})
}
