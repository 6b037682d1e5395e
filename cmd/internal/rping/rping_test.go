package rping

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// TestFill: rping's ping text, checked against what rdma-core's client
// prints with -v (pings 0 and 1 at the smallest size, the wrap after
// 'z', a head that does not fit).
func TestFill(t *testing.T) {
	buf := make([]byte, 23)
	start := fill(buf, 0, 'A')
	if got := string(cstring(buf)); got != "rdma-ping-0: ABCDEFGHI" || start != 'B' {
		t.Fatalf("ping 0: %q, next start %q", got, start)
	}
	if start = fill(buf, 1, start); string(cstring(buf)) != "rdma-ping-1: BCDEFGHIJ" {
		t.Fatalf("ping 1: %q", cstring(buf))
	}
	if start = fill(buf, 57, 'z'); string(cstring(buf)) != "rdma-ping-57: zABCDEFG" || start != 'A' {
		t.Fatalf("ping 57 from z: %q, next %q", cstring(buf), start)
	}
	fill(buf, 1234567890, 'A')
	if got := string(cstring(buf)); got != "rdma-ping-1234567890: " || buf[22] != 0 {
		t.Fatalf("a long head: %q", got)
	}
	big := make([]byte, 200)
	fill(big, 3, 'x')
	if s := string(cstring(big)); len(s) != 199 || !strings.HasPrefix(s, "rdma-ping-3: xyzABC") {
		t.Fatalf("200 bytes: %q", s)
	}
	for i, c := range cstring(big)[13:] {
		if c < 'A' || c > 'z' {
			t.Fatalf("byte %d is %q", 13+i, c)
		}
	}
}

// TestInfo: struct rping_rdma_info is big-endian on the wire.
func TestInfo(t *testing.T) {
	b := make([]byte, infoSize)
	m := info{addr: 0x0102030405060708, rkey: 0x1112_1314, size: 0x40}
	m.put(b)
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0, 0, 0, 0x40}
	if !bytes.Equal(b, want) || parseInfo(b) != m {
		t.Fatalf("% x, parsed back %+v", b, parseInfo(b))
	}
}

// TestParse: rping's option handling (outputs checked against
// rdma-core's v44 rping).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-x"}, 22, usage, ""},
		{nil, 22, usage, ""},
		{[]string{"-s", "-t", "1"}, 22, usage, ""},
		{[]string{"-s", "-S", "10", "-C", "-1"}, 22, "", "Invalid size 10 (valid range is 23 to 65536)\nInvalid count -1\n"},
		{[]string{"-c", "-S", "65536"}, 22, "", "Invalid size 65536 (valid range is 23 to 65536)\n"},
		{[]string{"-s", "-d", "-p", "99", "-S", "30", "-C", "5", "-v", "-V", "-c"}, 0, "port 99\nsize 30\ncount 5\nverbose\nvalidate data\nclient\n", ""},
		{[]string{"-s", "-a", "bad host"}, 254, "getaddrinfo failed (Name or service not known) - invalid hostname or IP address\n", ""},
	} {
		c, ok := cmtest.Parsed(t, tc.args, tc.code, tc.stdout, tc.stderr, func(stdout, stderr io.Writer) (*config, error) {
			return parse(stdout, stderr, tc.args)
		})
		if ok && (c.server != 0 || c.port != 99 || c.size != 30 || c.count != 5 || !c.verbose || !c.validate) {
			t.Errorf("%q: %+v", tc.args, c)
		}
	}
}
