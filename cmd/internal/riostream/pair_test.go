package riostream

import (
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// ours is our riostream in-process; count replaces size_to_count when
// not nil.
func ours(count func(int) int) cmtest.Side {
	if count == nil {
		count = rsock.SizeToCount
	}
	return cmtest.Side{Name: "ours", Main: func(stdout, stderr io.Writer, args []string) error {
		return run("riostream", stdout, stderr, args, rsock.RDMA, count)
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
	return pairOn(t, a, dev, server, client, extra...)
}

// pairOn is pair with the server on a, an address of device dev.
func pairOn(t testing.TB, a netip.Addr, dev uint32, server, client cmtest.Side, extra ...string) (rs, rc cmtest.Result) {
	t.Helper()
	addr := netip.AddrPortFrom(a, cmtest.Port())
	wait := func() error {
		err := cmtest.WaitListen(dev, addr, 20*time.Second)
		if server.Oracle != "" {
			// rdma-core's riostream sets RDMA_IOMAPSIZE on its listener
			// only after rlisten (server_connect's set_options), and a
			// connection inherits the listener's when its request comes:
			// a client that comes first gets no iomap entry, and its
			// riomap fails with ENOMEM (ours as rdma-core's). Give the
			// server time to get there.
			time.Sleep(2 * time.Second)
		}
		return err
	}
	return cmtest.Pair(t, addr, wait, 300*time.Second, server, client, extra...)
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
