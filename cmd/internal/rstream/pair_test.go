package rstream

import (
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// mode is how a test's two sides meet: TCP (-T s, on the loopback) or
// rsockets (on the rxe device's address).
type mode struct {
	name  string
	flags []string
	addr  func(t testing.TB) netip.Addr
	wait  func(t testing.TB, a netip.AddrPort) error // until the server listens
}

var tcpMode = mode{
	name:  "tcp",
	flags: []string{"-T", "s"},
	addr:  func(testing.TB) netip.Addr { return netip.MustParseAddr("127.0.0.1") },
	wait: func(_ testing.TB, a netip.AddrPort) error {
		return cmtest.WaitTCPListen(a.Port(), 20*time.Second)
	},
}

// ours is our rstream in-process; count replaces size_to_count when
// not nil.
func ours(count func(int) int) cmtest.Side {
	if count == nil {
		count = rsock.SizeToCount
	}
	return cmtest.Side{Name: "ours", Main: func(stdout, stderr io.Writer, args []string) error {
		return run("rstream", stdout, stderr, args, rsock.RDMA, count)
	}}
}

// pair runs a server and then a client with the same extra arguments
// in mode m and returns both results; either failing fails t.
func pair(t testing.TB, m mode, server, client cmtest.Side, extra ...string) (rs, rc cmtest.Result) {
	t.Helper()
	addr := netip.AddrPortFrom(m.addr(t), cmtest.Port())
	wait := func() error { return m.wait(t, addr) }
	return cmtest.Pair(t, addr, wait, 120*time.Second, server, client, append(append([]string{}, m.flags...), extra...)...)
}

// table checks out as rstream's table and returns its lines without the
// measured part (rsock.TableRows).
func table(t testing.TB, out string) []string {
	t.Helper()
	rows, err := rsock.TableRows(out)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
