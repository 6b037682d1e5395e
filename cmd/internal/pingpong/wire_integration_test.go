package pingpong

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestWireRCPingpong: an RC pingpong in event mode between ours and
// rdma-core's ibv_rc_pingpong across the wire, in both roles (side 0's
// guest serves, side 1's connects to it), with rdma-core's -c check of
// the received pages, 1 byte to 64 KiB. Each side parses its output, and
// the addresses each printed match what the other printed.
func TestWireRCPingpong(t *testing.T) {
	w, _ := rxetest.Wire(t)
	checkNoLeaks(t)
	ours, theirs := oracles(t, RC)
	for _, size := range []int{1, 4096, 65536} {
		for _, pair := range [][2]side{{ours, theirs}, {theirs, ours}} {
			t.Run(fmt.Sprintf("%d/%v-%v", size, pair[0], pair[1]), func(t *testing.T) {
				iters := 100
				if size > 4096 {
					iters = 20 // ours and rdma-core's wait 20 s at most for the other end
				}
				wirePingpong(t, w, pair, size, iters)
			})
		}
	}
}

// TestWirePingpong is TestWireRCPingpong for UD (a datagram of the port
// MTU: UD carries no more), UC (a few packets: UC loses a message for
// good where a packet drops, which a clean wire does not do) and SRQ
// (16 QPs on one shared receive queue).
func TestWirePingpong(t *testing.T) {
	w, _ := rxetest.Wire(t)
	checkNoLeaks(t)
	for _, tc := range []struct {
		kind  Kind
		size  int
		extra []string
	}{
		{UD, 1024, nil}, {UC, 4096, nil}, {SRQ, 64, nil},
	} {
		ours, theirs := oracles(t, tc.kind)
		for _, pair := range [][2]side{{ours, theirs}, {theirs, ours}} {
			t.Run(fmt.Sprintf("%s/%d%s/%v-%v", kindNames[tc.kind], tc.size, strings.Join(tc.extra, ""), pair[0], pair[1]), func(t *testing.T) {
				wirePingpong(t, w, pair, tc.size, 100, tc.extra...)
			})
		}
	}
}

// wirePingpong runs pair[0] as the server on side 0 and pair[1] as the
// client on side 1, in event mode with the -c check, on the GID of each
// guest's wire address; each side parses its own output and checks that
// its addresses are the peer's, the other way round.
func wirePingpong(t *testing.T, w *testenv.WireEnv, pair [2]side, size, iters int, extra ...string) {
	t.Helper()
	gid := strconv.Itoa(rxetest.GIDIndex(t, "rxe0", w.Self))
	args := append([]string{"-d", "rxe0", "-g", gid, "-s", strconv.Itoa(size), "-n", strconv.Itoa(iters), "-c", "-e", "-r", "100"}, extra...)
	var out string
	var err error
	if w.Side == 0 {
		port := int(nextPort.Add(1))
		wait := pair[0].start(append(args, "-p", strconv.Itoa(port)))
		if err := cmtest.WaitTCPListen(uint16(port), 10*time.Second); err != nil {
			out, serr := wait()
			w.Exchange(t, t.Name()+"/port", "")
			t.Fatalf("%v server: %v (exit: %v)\n%s", pair[0], err, serr, out)
		}
		w.Exchange(t, t.Name()+"/port", strconv.Itoa(port))
		out, err = wait()
	} else {
		port := w.Exchange(t, t.Name()+"/port", "")
		if port == "" {
			t.Fatalf("the server on %v did not start", w.Peer)
		}
		out, err = pair[1].start(append(args, "-p", port, w.Peer.String()))()
	}
	who := fmt.Sprintf("%v %s", pair[w.Side], map[int]string{0: "server", 1: "client"}[w.Side])
	if err != nil {
		w.Exchange(t, t.Name()+"/addresses", "failed")
		t.Fatalf("%s: %v\n%s", who, err, out)
	}
	r := parseOutput(t, who, out, numQP(pair[0].kind, extra), size, iters)
	join := func(a [][]string) string {
		var s []string
		for _, q := range a {
			s = append(s, strings.Join(q, " "))
		}
		return strings.Join(s, ";")
	}
	mine := join(r.local) + "|" + join(r.remote)
	peer := w.Exchange(t, t.Name()+"/addresses", mine)
	local, remote, _ := strings.Cut(peer, "|")
	if local != join(r.remote) || remote != join(r.local) {
		t.Fatalf("%s printed local|remote %q, the peer %q:\n%s", who, mine, peer, out)
	}
	if g := r.local[0][3]; g == "::" || !strings.Contains(g, "ffff") {
		t.Fatalf("%s: GID index %s gave %s, not an IPv4-mapped GID", who, gid, g)
	}
}
