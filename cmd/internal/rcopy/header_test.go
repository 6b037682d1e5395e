package rcopy

import (
	"bytes"
	"errors"
	"testing"
)

// Messages as rdma-core's rcopy lays them out on a little-endian host.
var (
	openFixture = []byte{
		0, 1, 24, 0, 0xa4, 0x81, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // open, len 24, mode 0100644
		'/', 't', 'm', 'p', '/', 'x', 0, 0,
	}
	writeFixture = []byte{
		0, 3, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x50, 0, 0, 0, 0, 0, // 5 MiB
	}
	closeRespFixture = []byte{0, 0x82, 16, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0x10} // close response, id 0x1000000000000007
)

func TestMessages(t *testing.T) {
	if b := OpenMessage("/tmp/x", 0o100644); !bytes.Equal(b, openFixture) {
		t.Errorf("open % x\nwant % x", b, openFixture)
	}
	// A path of a multiple of 8 bytes still gets its NUL: 8 more.
	if b := OpenMessage("/tmp/abc", 0); len(b) != 32 || !bytes.Equal(b[24:], make([]byte, 8)) {
		t.Errorf("open of 8 bytes: % x", b)
	}
	if b := WriteMessage(5 << 20); !bytes.Equal(b, writeFixture) {
		t.Errorf("write % x\nwant % x", b, writeFixture)
	}
	req := Header{Command: CmdClose, Len: HeaderSize, ID: 0x1000000000000007}
	if b := Response(req, 0); !bytes.Equal(b, closeRespFixture) {
		t.Errorf("response % x\nwant % x", b, closeRespFixture)
	}
	h, err := DecodeHeader(openFixture)
	if err != nil || h != (Header{Command: CmdOpen, Len: 24, Data: 0o100644}) || Path(openFixture[HeaderSize:]) != "/tmp/x" {
		t.Errorf("decode open: %+v, %v", h, err)
	}
	h, err = DecodeHeader(closeRespFixture)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := CheckResponse(h, CmdClose); err != nil || st != 0 {
		t.Errorf("close response: %d, %v", st, err)
	}
	if _, err := CheckResponse(h, CmdOpen); err == nil || err.Error() != "invalid length 16 or bad command response 82:81" {
		t.Errorf("close response to open: %v", err)
	}
	if s := (CmdWrite | CmdResp).String(); s != "write response" {
		t.Errorf("String %q", s)
	}
}

func TestDecodeHeaderErrors(t *testing.T) {
	if _, err := DecodeHeader(openFixture[:15]); !errors.Is(err, ErrShort) {
		t.Errorf("15 bytes: %v", err)
	}
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{[]byte{1, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "invalid version 1 or length 16"},
		{[]byte{0, 1, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "invalid version 0 or length 15"},
	} {
		_, err := DecodeHeader(c.b)
		var he *HeaderError
		if !errors.As(err, &he) || err.Error() != c.want {
			t.Errorf("% x: %v, want %q", c.b, err, c.want)
		}
	}
}

// FuzzDecodeHeader: any bytes decode without a panic, to an error or to
// a header that encodes back to the same 16 bytes and that
// msg_recv_hdr accepts.
func FuzzDecodeHeader(f *testing.F) {
	for _, b := range [][]byte{openFixture, writeFixture, closeRespFixture, {}, make([]byte, 16)} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b)
		if err != nil {
			return
		}
		if h.Version != 0 || h.Len < HeaderSize {
			t.Fatalf("accepted %+v", h)
		}
		if e := h.Append(nil); !bytes.Equal(e, b[:HeaderSize]) {
			t.Fatalf("% x encodes back to % x", b[:HeaderSize], e)
		}
		CheckResponse(h, h.Command&^CmdResp)
		_ = h.Command.String()
	})
}

func TestSplitServer(t *testing.T) {
	for _, c := range [][4]string{
		{"host", "a/src", "host", "a/src"},
		{"host:/tmp/dst", "src", "host", "/tmp/dst"},
		{"host:", "src", "host", ""},
		{"::1", "src", "", ":1"},
	} {
		if h, d := splitServer(c[0], c[1]); h != c[2] || d != c[3] {
			t.Errorf("splitServer(%q, %q) = %q, %q", c[0], c[1], h, d)
		}
	}
}
