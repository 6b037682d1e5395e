package rsproto

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
)

func TestIOMapBytes(t *testing.T) {
	m := IOMap{Offset: 0x1000, SGE: SGE{Addr: 0x7f0f12340000, Key: 0xabcd, Length: 4096}}
	for _, c := range []struct {
		o    binary.ByteOrder
		want string
	}{
		{binary.LittleEndian, "0010000000000000" + "000034120f7f0000" + "cdab0000" + "00100000"},
		{binary.BigEndian, "0000000000001000" + "00007f0f12340000" + "0000abcd" + "00001000"},
	} {
		b := make([]byte, IOMapSize)
		m.Put(b, c.o)
		if hex.EncodeToString(b) != c.want {
			t.Errorf("%v: %x, want %s", c.o, b, c.want)
		}
		if got, err := DecodeIOMap(b, c.o); err != nil || got != m {
			t.Errorf("%v: DecodeIOMap = %+v, %v", c.o, got, err)
		}
	}
	if !m.Covers(0x1000) || !m.Covers(0x1fff) || m.Covers(0x2000) || m.Covers(0xfff) {
		t.Error("Covers: the window is [0x1000, 0x2000)")
	}
	if (IOMap{}).Covers(0) {
		t.Error("an empty slot covers nothing")
	}
}

func TestIOMapErrors(t *testing.T) {
	if _, err := DecodeIOMap(make([]byte, 23), binary.LittleEndian); !errors.Is(err, ErrMalformed) {
		t.Errorf("short: %v", err)
	}
	for _, m := range []IOMap{
		{Offset: 1<<64 - 10, SGE: SGE{Addr: 0x1000, Length: 10}},
		{Offset: 0, SGE: SGE{Addr: 1<<64 - 4096, Length: 8192}},
	} {
		b := make([]byte, IOMapSize)
		m.Put(b, binary.LittleEndian)
		if _, err := DecodeIOMap(b, binary.LittleEndian); !errors.Is(err, ErrMalformed) {
			t.Errorf("%+v: %v, want ErrMalformed", m, err)
		}
	}
	// Ending exactly at the top is fine.
	b := make([]byte, IOMapSize)
	IOMap{Offset: 1<<64 - 10, SGE: SGE{Addr: 0x1000, Length: 9}}.Put(b, binary.LittleEndian)
	if _, err := DecodeIOMap(b, binary.LittleEndian); err != nil {
		t.Errorf("a window up to the last offset: %v", err)
	}
}

// TestScale: rs_value_to_scale and rs_scale_to_value as rsocket.c
// computes them (int arithmetic, the scale cut to a byte).
func TestScale(t *testing.T) {
	for _, c := range []struct {
		n     int
		scale uint8
		back  int
	}{
		{0, 0, 0}, {1, 1, 1}, {127, 127, 127}, {128, 128, 128}, {129, 0x80, 128}, {255, 0x80, 128},
		{256, 0x81, 256}, {300, 0x81, 256}, {1000, 0x83, 768}, {32767, 0xff, 32512}, {65535, 0xff, 32512},
		{40000, 0x9c, 0x1c << 8},
	} {
		if s := ValueToScale(c.n); s != c.scale || ScaleToValue(s) != c.back {
			t.Errorf("ValueToScale(%d) = %#x → %d; want %#x → %d", c.n, s, ScaleToValue(s), c.scale, c.back)
		}
	}
	for n, want := range map[int]int{-1: 0, 0: 0, 1: 1, 128: 128, 129: 128, 300: 256, 40000: MaxIOMapEntries, 1 << 20: MaxIOMapEntries} {
		if got := IOMapEntries(n); got != want {
			t.Errorf("IOMapEntries(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestConnDataIOMap(t *testing.T) {
	c := ConnData{Flags: FlagIOMap, IOMapSize: 0x81, TargetSGL: SGE{Addr: 0x5000, Key: 7, Length: 2}}
	if got := c.RemoteIOMap(); got != (SGE{Addr: 0x5020, Key: 7, Length: 256}) {
		t.Errorf("RemoteIOMap = %+v", got)
	}
	c.Flags = 0
	if c.IOMapEntries() != 0 || c.RemoteIOMap().Length != 0 {
		t.Error("without FlagIOMap the peer has no iomap")
	}
}

func FuzzDecodeIOMap(f *testing.F) {
	f.Add(make([]byte, IOMapSize), true)
	f.Add(bytes.Repeat([]byte{0xff}, IOMapSize), false)
	f.Add([]byte{1, 2, 3}, false)
	f.Fuzz(func(t *testing.T, b []byte, big bool) {
		var o binary.ByteOrder = binary.LittleEndian
		if big {
			o = binary.BigEndian
		}
		m, err := DecodeIOMap(b, o)
		if err != nil {
			return
		}
		out := make([]byte, IOMapSize)
		m.Put(out, o)
		if !bytes.Equal(out, b[:IOMapSize]) {
			t.Fatalf("round trip %x → %x", b[:IOMapSize], out)
		}
		if m.SGE.Length > 0 && (!m.Covers(m.Offset) || !m.Covers(m.Offset+uint64(m.SGE.Length)-1) ||
			m.Covers(m.Offset+uint64(m.SGE.Length))) {
			t.Fatalf("%+v does not cover exactly its window", m)
		}
	})
}

func FuzzScale(f *testing.F) {
	f.Add(300)
	f.Fuzz(func(t *testing.T, n int) {
		e := IOMapEntries(n)
		if e < 0 || e > MaxIOMapEntries || (n > 0 && e > n) {
			t.Fatalf("IOMapEntries(%d) = %d", n, e)
		}
		if IOMapEntries(e) != e {
			t.Fatalf("IOMapEntries(%d) = %d is not a fixed point", n, e)
		}
		_ = ScaleToValue(ValueToScale(n))
	})
}
