package pingpong

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// TestWireMTU: with side 0's wire at MTU 4200 (rxe0's active MTU 4096)
// and side 1's at 1500 (1024), ibv_rc_pingpong -m 4096 with 4 KiB
// messages and -m 1024 work or fail on each side exactly as rdma-core's
// do: each pair, ours↔ours and rdma-core's↔rdma-core's, with the same
// arguments, ends the same way on the same side.
func TestWireMTU(t *testing.T) {
	w, _ := rxetest.Wire(t)
	checkNoLeaks(t)
	mtu := 1500
	if w.Side == 0 {
		mtu = 4200
	}
	active := rxetest.SetWireMTU(t, mtu)
	peerActive := w.Exchange(t, t.Name()+"/mtu", active.String())
	t.Logf("side %d: eth0 MTU %d, rxe0 active MTU %v; the peer's %s", w.Side, mtu, active, peerActive)
	gid := strconv.Itoa(rxetest.GIDIndex(t, "rxe0", w.Self))
	ours, theirs := oracles(t, RC)
	for _, m := range []string{"4096", "1024"} {
		outcome := map[string]string{}
		for _, s := range []side{theirs, ours} {
			t.Run(fmt.Sprintf("m%s/%v", m, s), func(t *testing.T) {
				args := []string{"-d", "rxe0", "-g", gid, "-m", m, "-s", "4096", "-n", "5", "-e"}
				var out string
				var err error
				start := time.Now()
				if w.Side == 0 {
					port := int(nextPort.Add(1))
					wait := s.start(append(args, "-p", strconv.Itoa(port)))
					if err := cmtest.WaitTCPListen(uint16(port), 10*time.Second); err != nil {
						out, serr := wait()
						t.Fatalf("%v server: %v (exit: %v)\n%s", s, err, serr, out)
					}
					w.Exchange(t, t.Name()+"/port", strconv.Itoa(port))
					out, err = wait()
				} else {
					port := w.Exchange(t, t.Name()+"/port", "")
					out, err = s.start(append(args, "-p", port, w.Peer.String()))()
				}
				res := "works"
				if err != nil {
					res = "fails"
				}
				outcome[s.String()] = res
				peer := w.Exchange(t, t.Name()+"/outcome", res)
				t.Logf("side %d, -m %s, %v: %s after %v (the peer: %s): %v\n%s", w.Side, m, s, res, time.Since(start).Round(time.Millisecond), peer, err, out)
			})
		}
		if outcome["ours"] != outcome[theirs.String()] {
			t.Errorf("-m %s on side %d: ours %s, rdma-core's %s", m, w.Side, outcome["ours"], outcome[theirs.String()])
		}
	}
}
