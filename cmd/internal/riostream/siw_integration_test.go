package riostream

import (
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// TestMain lets the test binary be our riostream as a process
// (cmtest.Self), for the peer namespace of the siw guest.
func TestMain(m *testing.M) {
	cmtest.RunSelf(func(stdout, stderr io.Writer, args []string) error {
		return run("riostream", stdout, stderr, args, rsock.RDMA, rsock.SizeToCount)
	})
	os.Exit(m.Run())
}

// TestIntegrationSIWRiostream: on Soft-iWARP rsockets allow iomap as on
// rxe (rs_write_iomap sends the entry's message with a SEND there):
// ours against ours and against rdma-core's riostream in both roles,
// data verified at both ends, the server on siw0 and the client on siw1
// in the peer namespace (ours there as a process).
func TestIntegrationSIWRiostream(t *testing.T) {
	e, dev := cmtest.SIW(t)
	o, r := ours(nil), theirs(t)
	op, rp := cmtest.Self("ours").InNetns(e.PeerNetns), r.InNetns(e.PeerNetns)
	for _, p := range [][2]cmtest.Side{{o, op}, {r, op}, {o, rp}} {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			cmtest.NoQPsLeft(t, dev)
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"-S", "100000", "-C", "10", "-I", "2", "-T", "v"}, "custom    97k     10      2       3.8m    "},
				{[]string{"-S", "64", "-C", "1", "-I", "200", "-T", "v", "-T", "b"}, "custom    64      1       200     25k     "},
			} {
				rs, rc := pairOn(t, e.Addr, dev, p[0], p[1], c.args...)
				want := []string{c.want}
				if s, cl := table(t, rs.Stdout), table(t, rc.Stdout); !slices.Equal(s, want) || !slices.Equal(cl, want) {
					t.Fatalf("%q: server %q\nclient %q\nwant %q", c.args, s, cl, want)
				}
			}
		})
	}
}
