package riostream

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// TestIntegrationRiostream: ours against ours and against rdma-core's
// riostream in both roles, data verified at both ends (-T v): a
// transfer of many RDMA WRITEs that wrap the send buffer, and a
// latency-style test of one small transfer per iteration in blocking
// mode. Both sides print the same table.
func TestIntegrationRiostream(t *testing.T) {
	o, r := ours(nil), theirs(t)
	for _, p := range [][2]cmtest.Side{{o, o}, {r, o}, {o, r}} {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) {
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"-S", "100000", "-C", "10", "-I", "2", "-T", "v"}, "custom    97k     10      2       3.8m    "},
				{[]string{"-S", "64", "-C", "1", "-I", "200", "-T", "v", "-T", "b"}, "custom    64      1       200     25k     "},
				{[]string{"-S", "300000", "-C", "3", "-T", "v", "-T", "a"}, "custom    292k    3       1       1.7m    "},
			} {
				rs, rc := pair(t, p[0], p[1], c.args...)
				want := []string{c.want}
				if s, cl := table(t, rs.Stdout), table(t, rc.Stdout); !slices.Equal(s, want) || !slices.Equal(cl, want) {
					t.Fatalf("%q: server %q\nclient %q\nwant %q", c.args, s, cl, want)
				}
			}
		})
	}
}

// TestIntegrationRiostreamTables: without a custom size both sides
// connect twice, for the latency and the bandwidth tables, each test
// with a window of its own; the counts are shrunk to keep it short.
func TestIntegrationRiostreamTables(t *testing.T) {
	three := func(int) int { return 3 }
	rs, rc := pair(t, ours(three), ours(three), "-T", "v")
	var got []string
	for _, row := range table(t, rc.Stdout) {
		got = append(got, strings.Join(strings.Fields(row), " "))
	}
	want := "64_lat 64 1 3 384|4k_lat 4k 1 3 24k|64k_lat 64k 1 3 384k|1m_lat 1m 1 3 6m|" +
		"64_bw 64 3 1 384|4k_bw 4k 3 1 24k|64k_bw 64k 3 1 384k|1m_bw 1m 3 1 6m"
	if g := strings.Join(got, "|"); g != want || !slices.Equal(table(t, rs.Stdout), table(t, rc.Stdout)) {
		t.Fatalf("server\n%s\nclient\n%s\nwant %s", rs.Stdout, rc.Stdout, want)
	}
}

// TestIntegrationRiostreamErrors: bad command lines, a name where -f ip
// wants an address, an unknown service and a blocking client with
// nobody listening end as rdma-core's riostream does: the same output
// and exit status.
func TestIntegrationRiostreamErrors(t *testing.T) {
	o, r := ours(nil), theirs(t)
	a, _ := cmtest.RxeAddr(t)
	nobody := strconv.Itoa(int(cmtest.Port()))
	for _, args := range [][]string{
		{"-x"}, {"-T", "x"}, {"-T", "s"}, {"-s"},
		{"-f", "ip", "-s", "localhost", "-C", "1"},
		{"-s", a.String(), "-p", "no-such-service", "-C", "1"},
		{"-T", "b", "-s", a.String(), "-p", nobody, "-C", "1"},
	} {
		rt := r.Start(args, 30*time.Second)()
		ro := o.Start(args, 30*time.Second)()
		// rdma-core's names itself by argv[0], the full path.
		rt.Stdout = strings.ReplaceAll(rt.Stdout, r.Oracle, "riostream")
		rt.Stderr = strings.ReplaceAll(rt.Stderr, r.Oracle, "riostream")
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
	}
}

// TestIntegrationRiostreamPeerGone: a server whose client leaves while
// the server waits for its writes ends with rrecv's error, where
// rdma-core's riostream would spin for ever.
func TestIntegrationRiostreamPeerGone(t *testing.T) {
	a, dev := cmtest.RxeAddr(t)
	addr := netip.AddrPortFrom(a, cmtest.Port())
	wait := ours(nil).Start([]string{"-b", a.String(), "-p", strconv.Itoa(int(addr.Port())), "-S", "64", "-I", "1000000"}, 60*time.Second)
	if err := cmtest.WaitListen(dev, addr, 20*time.Second); err != nil {
		t.Fatalf("server: %v\n%v", err, wait())
	}
	c, err := (&rsocket.Dialer{IOMapSize: 1}).DialContext(context.Background(), "rdma", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	var sync [16]byte
	if _, err := c.Write(sync[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, sync[:]); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.Close()
	r := wait()
	if r.Code != 255 || r.Stderr != "rrecv: Connection reset by peer\n" || r.Stdout != rsock.Header {
		t.Fatalf("server after its client left: %v", r)
	}
	t.Logf("the server ended %v after the client left", time.Since(start))
}
