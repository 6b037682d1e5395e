package rstream

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func theirs(t testing.TB) cmtest.Side {
	return cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(t, "rstream")}
}

// interop runs ours against ours and against rdma-core's rstream in
// both roles in mode m: a custom test with data verified at both ends,
// and one in blocking mode with keep-alive on (which the server sets,
// and prints, on its listener and then on the connection); both sides
// print the same table.
func interop(t *testing.T, m mode) {
	o, r := ours(nil), theirs(t)
	for _, p := range [][2]cmtest.Side{{o, o}, {r, o}, {o, r}} {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) { interopPair(t, m, p[0], p[1]) })
	}
}

// interopPair is interop's two runs for one pair of sides.
func interopPair(t *testing.T, m mode, server, client cmtest.Side) {
	t.Helper()
	rs, rc := pair(t, m, server, client, "-S", "100000", "-C", "10", "-I", "2", "-T", "v")
	want := []string{"custom    97k     10      2       3.8m    "}
	if s, c := table(t, rs.Stdout), table(t, rc.Stdout); !slices.Equal(s, want) || !slices.Equal(c, want) {
		t.Fatalf("server %q\nclient %q\nwant %q", s, c, want)
	}
	rs, rc = pair(t, m, server, client, "-C", "20", "-k", "3", "-T", "b")
	ka := "Keepalive: ON\n  time: 3\n"
	wantS := rsock.Header + ka + ka + "custom    1000    20      1       39k     "
	wantC := rsock.Header + ka + "custom    1000    20      1       39k     "
	if !strings.HasPrefix(rs.Stdout, wantS) || !strings.HasPrefix(rc.Stdout, wantC) ||
		strings.Count(rs.Stdout, "\n") != 6 || strings.Count(rc.Stdout, "\n") != 4 {
		t.Fatalf("-k: server\n%s\nclient\n%s", rs.Stdout, rc.Stdout)
	}
}

// TestIntegrationRstreamSockets: -T s (the kernel's TCP) interoperates
// with rdma-core's rstream in both roles.
func TestIntegrationRstreamSockets(t *testing.T) { interop(t, tcpMode) }

// TestIntegrationRstreamErrors: bad command lines, a name where -f ip
// wants an address, an unknown service, and a client with
// nobody listening (blocking and not) end as rdma-core's rstream does:
// the same output and exit status.
func TestIntegrationRstreamErrors(t *testing.T) {
	o, r := ours(nil), theirs(t)
	nobody := strconv.Itoa(int(cmtest.Port()))
	for _, args := range [][]string{
		{"-x"}, {"-T", "x"}, {"-s"},
		{"-T", "s", "-s", "127.0.0.1", "-p", nobody, "-C", "1"},
		{"-T", "s", "-T", "b", "-s", "127.0.0.1", "-p", nobody, "-C", "1"},
		{"-T", "s", "-f", "ip", "-s", "localhost", "-C", "1"},
		{"-T", "s", "-s", "127.0.0.1", "-p", "no-such-service", "-C", "1"},
	} {
		rt := r.Start(args, 30*time.Second)()
		ro := o.Start(args, 30*time.Second)()
		// rdma-core's names itself by argv[0], the full path.
		rt.Stdout = strings.ReplaceAll(rt.Stdout, r.Oracle, "rstream")
		rt.Stderr = strings.ReplaceAll(rt.Stderr, r.Oracle, "rstream")
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
	}
}
