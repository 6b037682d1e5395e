package perftest

import (
	"bytes"
	"errors"
	"math"
	"net/netip"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

// The key messages below are written out from perftest's formats
// (KEY_PRINT_FMT_GID and KEY_PRINT_FMT), field by field.
var (
	fixtureDest = Dest{LID: 0, OutReads: 0x80, QPN: 0x14, PSN: 0xcbd8f3, RKey: 0x435, VAddr: 0x555d95338000,
		GID: ib.GID(netip.MustParseAddr("::ffff:10.77.0.1").As16()), SRQN: 0}
	fixtureKeyGID = "0000:0080:000014:cbd8f3:00000435:0000555d95338000:" +
		"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:01:" + "00000000:\x00"
	fixtureKey = "0000:0080:000014:cbd8f3:00000435:0000555d95338000:00000000\x00"
)

func TestKeyMessage(t *testing.T) {
	for _, tc := range []struct {
		gid  bool
		want string
		size int
	}{{true, fixtureKeyGID, keyMsgSizeGID}, {false, fixtureKey, keyMsgSize}} {
		d := fixtureDest
		if !tc.gid {
			d.GID = ib.GID{}
		}
		b := EncodeKey(&d, tc.gid)
		if string(b) != tc.want || len(b) != tc.size {
			t.Errorf("gid %v: %q (%d bytes), want %q (%d)", tc.gid, b, len(b), tc.want, tc.size)
		}
		got, err := DecodeKey([]byte(tc.want), tc.gid)
		if err != nil || got != d {
			t.Errorf("gid %v: decode %+v, %v; want %+v", tc.gid, got, err, d)
		}
	}
	for _, bad := range []string{"", fixtureKeyGID[:107], "zzzz" + fixtureKeyGID[4:], fixtureKeyGID[:50] + ":" + fixtureKeyGID[51:]} {
		if _, err := DecodeKey([]byte(bad), true); !errors.Is(err, ErrKeyMessage) {
			t.Errorf("%q: %v, want ErrKeyMessage", bad, err)
		}
	}
}

// TestKeyMessageWide: a QPN or PSN wider than its 24 bits (which no QP
// has) is masked when encoding, so the message keeps perftest's fixed
// size and its own decoder takes it.
func TestKeyMessageWide(t *testing.T) {
	for _, gid := range []bool{false, true} {
		d := fixtureDest
		if !gid {
			d.GID = ib.GID{}
		}
		want := d
		d.QPN |= 0xff << 24
		d.PSN |= 1 << 24
		b := EncodeKey(&d, gid)
		size := keyMsgSize
		if gid {
			size = keyMsgSizeGID
		}
		if len(b) != size {
			t.Fatalf("gid %v: %q is %d bytes, want %d", gid, b, len(b), size)
		}
		if got, err := DecodeKey(b, gid); err != nil || got != want {
			t.Errorf("gid %v: decode %+v, %v; want %+v", gid, got, err, want)
		}
	}
	// A peer's wide field keeps the 24 bits the QP can use.
	msg := "0000:000:1000014:000000:00000000:0000000000000000:000000000"
	if got, err := DecodeKey([]byte(msg), false); err != nil || got.QPN != 0x14 {
		t.Errorf("%q: QPN %#x, %v; want 0x14", msg, got.QPN, err)
	}
}

func TestSmallMessages(t *testing.T) {
	if v := versionMsg("6.06"); !bytes.Equal(v, []byte("6.06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")) {
		t.Errorf("version %q", v)
	}
	if got := parseVersion([]byte("5.70\x00garbage")); got != 5.70 {
		t.Errorf("parseVersion %v", got)
	}
	if got := parseVersion(make([]byte, 16)); got != 0 {
		t.Errorf("parseVersion of zeros %v", got)
	}
	if m := mtuMsg(ib.MTU1024); !bytes.Equal(m, []byte("3\x00")) || parseMTU(m) != 3 {
		t.Errorf("mtu %q", m)
	}
}

func TestReportFields(t *testing.T) {
	r := Report{Size: 65536, Iters: 20, BWPeak: 77.66, BWAvg: 67.93, MsgRateAvg: 0.001087}
	f := reportFields(&r, true)
	want := [][]byte{{0, 0, 0, 0, 0, 1, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 20}}
	if !bytes.Equal(f[0], want[0]) || !bytes.Equal(f[1], want[1]) || len(f) != 5 {
		t.Fatalf("fields %x", f)
	}
	// 77.66 is 0x40536a3d70a3d70a in IEEE-754.
	if !bytes.Equal(f[2], []byte{0x40, 0x53, 0x6a, 0x3d, 0x70, 0xa3, 0xd7, 0x0a}) {
		t.Errorf("bw_peak %x", f[2])
	}
	got, err := decodeReport(f)
	if err != nil || got != r {
		t.Errorf("decode %+v %v", got, err)
	}
	if short := reportFields(&r, false); len(short[1]) != 4 {
		t.Errorf("old peer's iters %x", short[1])
	}
	if _, err := decodeReport(f[:4]); err == nil {
		t.Error("short report decoded")
	}
}

func FuzzDecodeKey(f *testing.F) {
	f.Add([]byte(fixtureKeyGID), true)
	f.Add([]byte(fixtureKey), false)
	f.Fuzz(func(t *testing.T, b []byte, gid bool) {
		d, err := DecodeKey(b, gid)
		if err != nil {
			if !errors.Is(err, ErrKeyMessage) {
				t.Fatalf("%v", err)
			}
			return
		}
		if d.QPN > mask24 || d.PSN > mask24 {
			t.Fatalf("%+v: QPN or PSN wider than 24 bits", d)
		}
		d2, err := DecodeKey(EncodeKey(&d, gid), gid)
		if err != nil || d2 != d {
			t.Fatalf("round trip %+v -> %+v %v", d, d2, err)
		}
	})
}

func FuzzDecodeReport(f *testing.F) {
	r := Report{Size: 2, Iters: 5, BWPeak: 1, BWAvg: math.Inf(1)}
	f.Add(bytes.Join(reportFields(&r, true), nil), true)
	f.Fuzz(func(t *testing.T, b []byte, long bool) {
		n := 4
		if long {
			n = 8
		}
		var fields [][]byte
		for _, size := range []int{8, n, 8, 8, 8} {
			if len(b) < size {
				return
			}
			fields, b = append(fields, b[:size]), b[size:]
		}
		got, err := decodeReport(fields)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := decodeReport(reportFields(&got, long))
		if again.Size != got.Size || again.Iters != got.Iters {
			t.Fatalf("%+v != %+v", again, got)
		}
	})
}
