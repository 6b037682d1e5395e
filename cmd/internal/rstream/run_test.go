package rstream

import (
	"slices"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestCustomTCP: one custom test ours against ours over TCP, data
// verified at both ends, the same line at both.
func TestCustomTCP(t *testing.T) {
	rs, rc := pair(t, tcpMode, ours(nil), ours(nil), "-S", "10000", "-C", "20", "-I", "3", "-T", "v")
	want := []string{"custom    9.7k    20      3       1.1m    "}
	if s, c := table(t, rs.Stdout), table(t, rc.Stdout); !slices.Equal(s, want) || !slices.Equal(c, want) {
		t.Fatalf("server %q\nclient %q\nwant %q", s, c, want)
	}
}

// TestTablesTCP: without a custom size both sides connect twice, for
// the latency and the bandwidth tables (powers of 16, or every size
// with -S all); the counts are shrunk to keep the test short.
func TestTablesTCP(t *testing.T) {
	two := func(int) int { return 2 }
	rs, rc := pair(t, tcpMode, ours(two), ours(two), "-T", "v")
	want := []string{
		"64_lat    64      1       2       256     ",
		"4k_lat    4k      1       2       16k     ",
		"64k_lat   64k     1       2       256k    ",
		"1m_lat    1m      1       2       4m      ",
		"64_bw     64      2       1       256     ",
		"4k_bw     4k      2       1       16k     ",
		"64k_bw    64k     2       1       256k    ",
		"1m_bw     1m      2       1       4m      ",
	}
	if s, c := table(t, rs.Stdout), table(t, rc.Stdout); !slices.Equal(s, want) || !slices.Equal(c, want) {
		t.Fatalf("server\n%s\nclient\n%s\nwant\n%s", strings.Join(s, "\n"), strings.Join(c, "\n"), strings.Join(want, "\n"))
	}
	if testenv.Race {
		// -S all is the same code over all 34 sizes, up to 6 MiB: 63 s
		// of the race guest's run, and the plain runs check its table.
		return
	}
	one := func(int) int { return 1 }
	rs, rc = pair(t, tcpMode, ours(one), ours(one), "-S", "all", "-T", "b", "-T", "v")
	s, c := table(t, rs.Stdout), table(t, rc.Stdout)
	if len(s) != 2*len(rsock.TestSizes) || !slices.Equal(s, c) || s[len(s)-1] != "6m_bw     6m      1       1       12m     " {
		t.Fatalf("-S all: server\n%s\nclient\n%s", strings.Join(s, "\n"), strings.Join(c, "\n"))
	}
}
