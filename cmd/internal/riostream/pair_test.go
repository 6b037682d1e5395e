package riostream

import (
	"io"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testenv"
)

// ours is our riostream in-process; count replaces size_to_count when
// not nil.
func ours(count func(int) int) cmtest.Side {
	if count == nil {
		count = rsock.SizeToCount
	}
	return cmtest.Side{Name: "ours", Main: func(stdout, stderr io.Writer, args []string) error {
		return (&program{prog: "riostream", stdout: stdout, stderr: stderr, nw: rsock.RDMA, count: count}).main(args)
	}}
}

func theirs(t testing.TB) cmtest.Side {
	return cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(t, "riostream")}
}

// pair runs a server on the rxe device's address and then a client
// with the same extra arguments, and returns both results; either
// failing fails t.
func pair(t testing.TB, server, client cmtest.Side, extra ...string) (rs, rc cmtest.Result) {
	t.Helper()
	a, dev := cmtest.RxeAddr(t)
	addr := netip.AddrPortFrom(a, cmtest.Port())
	p := append([]string{"-p", strconv.Itoa(int(addr.Port()))}, extra...)
	waitS := server.Start(append([]string{"-b", a.String()}, p...), 300*time.Second)
	if err := cmtest.WaitListen(dev, addr, 20*time.Second); err != nil {
		t.Fatalf("%v server: %v\n%v", server, err, waitS())
	}
	rc = client.Start(append([]string{"-s", a.String()}, p...), 300*time.Second)()
	rs = waitS()
	if rc.Code != 0 || rs.Code != 0 || rs.Stderr != "" || rc.Stderr != "" {
		t.Fatalf("%v server: %v\n%v client: %v", server, rs, client, rc)
	}
	return rs, rc
}

// table is rsock.TableRows, failing t.
func table(t testing.TB, out string) []string {
	t.Helper()
	rows, err := rsock.TableRows(out)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
