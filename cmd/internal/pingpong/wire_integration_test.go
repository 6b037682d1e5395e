package pingpong

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/rxetest"
)

// TestWireRCPingpong: an RC pingpong in event mode between ours and
// rdma-core's ibv_rc_pingpong across the wire, in both roles (side 0's
// guest serves, side 1's connects to it), with rdma-core's -c check of
// the received pages, 1 byte to 64 KiB. Each side parses its output, and
// the addresses each printed match what the other printed.
func TestWireRCPingpong(t *testing.T) {
	w, _ := rxetest.Wire(t)
	checkNoLeaks(t)
	gid := strconv.Itoa(rxetest.GIDIndex(t, "rxe0", w.Self))
	ours, theirs := oracles(t, RC)
	for _, size := range []int{1, 4096, 65536} {
		for _, pair := range [][2]side{{ours, theirs}, {theirs, ours}} {
			t.Run(fmt.Sprintf("%d/%v-%v", size, pair[0], pair[1]), func(t *testing.T) {
				iters := 100
				if size > 4096 {
					iters = 20 // ours and rdma-core's wait 20 s at most for the other end
				}
				args := []string{"-d", "rxe0", "-g", gid, "-s", strconv.Itoa(size), "-n", strconv.Itoa(iters), "-c", "-e", "-r", "100"}
				var out string
				var err error
				if w.Side == 0 {
					port := int(nextPort.Add(1))
					wait := pair[0].start(append(args, "-p", strconv.Itoa(port)))
					if err := waitListen(port, 10*time.Second); err != nil {
						out, serr := wait()
						t.Fatalf("%v server: %v (exit: %v)\n%s", pair[0], err, serr, out)
					}
					w.Exchange(t, t.Name()+"/port", strconv.Itoa(port))
					out, err = wait()
				} else {
					port := w.Exchange(t, t.Name()+"/port", "")
					out, err = pair[1].start(append(args, "-p", port, w.Peer.String()))()
				}
				who := fmt.Sprintf("%v %s", pair[w.Side], map[int]string{0: "server", 1: "client"}[w.Side])
				if err != nil {
					w.Exchange(t, t.Name()+"/addresses", "failed")
					t.Fatalf("%s: %v\n%s", who, err, out)
				}
				r := parseOutput(t, who, out, 1, size, iters)
				mine := strings.Join(r.local[0], " ") + "|" + strings.Join(r.remote[0], " ")
				peer := w.Exchange(t, t.Name()+"/addresses", mine)
				local, remote, _ := strings.Cut(peer, "|")
				if local != strings.Join(r.remote[0], " ") || remote != strings.Join(r.local[0], " ") {
					t.Fatalf("%s printed local|remote %q, the peer %q:\n%s", who, mine, peer, out)
				}
				if g := r.local[0][3]; g == "::" || !strings.Contains(g, "ffff") {
					t.Fatalf("%s: GID index %s gave %s, not an IPv4-mapped GID", who, gid, g)
				}
			})
		}
	}
}
