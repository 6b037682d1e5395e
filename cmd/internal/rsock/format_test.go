package rsock

import (
	"errors"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

func TestSizeStr(t *testing.T) {
	for _, c := range []struct {
		size  int64
		ssize int
		want  string
	}{
		{0, 32, "0"}, {64, 32, "64"}, {1023, 32, "1023"}, {1024, 32, "1k"}, {1536, 32, "1.5k"},
		{10239, 32, "9.9k"}, {10240, 32, "10k"}, {600000, 32, "585k"}, {1 << 20, 32, "1m"},
		{1<<20 + 1<<19, 32, "1.5m"}, {12800000, 32, "12m"}, {1 << 30, 32, "1g"},
		{3 << 29, 32, "1.5g"}, {1 << 40, 32, "1024g"}, {-5, 32, "-5"},
		// rstream's names: size_str into 5 bytes.
		{1<<20 + 1<<19, 5, "1.5m"}, {10239, 4, "9.9"}, {123456, 1, ""},
	} {
		if got := SizeStr(c.size, c.ssize); got != c.want {
			t.Errorf("SizeStr(%d, %d) = %q, want %q", c.size, c.ssize, got, c.want)
		}
	}
}

func TestCntStr(t *testing.T) {
	for _, c := range []struct {
		cnt  int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1k"}, {1999, "1k"}, {100000, "100k"},
		{1_000_000, "1m"}, {999_999_999, "999m"}, {1_000_000_000, "1b"}, {-3, "-3"},
	} {
		if got := CntStr(c.cnt, 32); got != c.want {
			t.Errorf("CntStr(%d) = %q, want %q", c.cnt, got, c.want)
		}
	}
}

func TestSizeToCount(t *testing.T) {
	for size, want := range map[int]int{0: 100000, 1023: 100000, 1024: 10000, 1<<16 - 1: 10000,
		1 << 16: 1000, 1<<20 - 1: 1000, 1 << 20: 100, 6 << 20: 100} {
		if got := SizeToCount(size); got != want {
			t.Errorf("SizeToCount(%d) = %d, want %d", size, got, want)
		}
	}
}

// TestPattern: the bytes count on across transfers, each direction on
// its own, and a wrong byte is reported by its place in the stream.
func TestPattern(t *testing.T) {
	var tx, rx Pattern
	a, b := make([]byte, 200), make([]byte, 100)
	tx.Fill(a)
	tx.Fill(b)
	if a[0] != 0 || a[199] != 199 || b[0] != 200 || b[55] != 255 || b[56] != 0 {
		t.Fatalf("pattern %v %v", a[:3], b[54:58])
	}
	if err := rx.Verify(a); err != nil {
		t.Fatal(err)
	}
	b[10]++
	err := rx.Verify(b)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Byte != 210 || err.Error() != "data verification failed byte 210" {
		t.Fatalf("Verify: %v", err)
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		host, port       string
		passive, numeric bool
		want             string
		code             int
	}{
		{"127.0.0.1", "7471", false, false, "127.0.0.1:7471", 0},
		{"", "7427", true, true, "0.0.0.0:7427", 0},
		{"::1", "7471", false, true, "[::1]:7471", 0},
		{"localhost", "7471", false, true, "", -2},
		{"bad host", "7471", false, false, "", -2},
		{"127.0.0.1", "no-such-service", false, false, "", -8},
	} {
		got, err := Resolve(c.host, c.port, c.passive, c.numeric)
		var le *cmnode.LookupError
		switch {
		case c.code == 0 && (err != nil || got != c.want):
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", c.host, c.port, got, err, c.want)
		case c.code != 0 && (!errors.As(err, &le) || le.Code != c.code):
			t.Errorf("Resolve(%q, %q) = %q, %v; want getaddrinfo code %d", c.host, c.port, got, err, c.code)
		}
	}
}
