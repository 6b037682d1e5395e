package udaddy

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// TestWireUdaddy: 2 SIDR "connections" of 10 datagrams of 100 bytes
// each way across the wire (the server's replies addressed from the
// first datagram's completion and GRH, which here name the other
// guest), ours against rdma-core's in both roles (side 0's guest
// serves, side 1's connects) and against ours; each side checks its own
// output and that no id is left. udaddy's port is fixed (7174).
func TestWireUdaddy(t *testing.T) {
	w, dev := rxetest.Wire(t)
	o, r := sides(t)
	for _, pair := range [][2]cmtest.Side{{o, r}, {r, o}, {o, o}} {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			extra := []string{"-c", "2", "-C", "10", "-S", "100"}
			p := cmtest.WirePair{Server: pair[0], Client: pair[1], Port: 7174, Limit: 60 * time.Second,
				ServerArgs: func(self netip.Addr, _ string) []string { return append([]string{"-b", self.String()}, extra...) },
				ClientArgs: func(peer netip.Addr, _ string) []string { return append([]string{"-s", peer.String()}, extra...) },
			}
			me, role, res := p.Run(t, w, dev)
			want := map[string]string{"server": serverOut, "client": clientOut}[role]
			if res.Code != 0 || res.Stdout != want || res.Stderr != "" {
				t.Fatalf("%v %s: %v", me, role, res)
			}
		})
	}
}
