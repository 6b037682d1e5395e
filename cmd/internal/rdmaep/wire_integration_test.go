package rdmaep

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// TestWireRdmaServerClient: the 16-byte exchange across the wire, ours
// against rdma-core's in both roles (side 0's guest runs rdma_server,
// side 1's rdma_client) and against ours; each side ends with status 0
// only if its send and receive completed, checks its own output and
// that no id is left.
func TestWireRdmaServerClient(t *testing.T) {
	w, dev := rxetest.Wire(t)
	srv, cli := sides(t)
	for _, pair := range [][2]int{{0, 1}, {1, 0}, {0, 0}} {
		server, client := srv[pair[0]], cli[pair[1]]
		t.Run(fmt.Sprintf("%v-%v", server, client), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			p := cmtest.WirePair{Server: server, Client: client, Limit: 60 * time.Second,
				ServerArgs: func(self netip.Addr, port string) []string { return []string{"-s", self.String(), "-p", port} },
				ClientArgs: func(peer netip.Addr, port string) []string { return []string{"-s", peer.String(), "-p", port} },
			}
			me, role, r := p.Run(t, w, dev)
			want := map[string]string{"server": "rdma_server: start\nrdma_server: end 0\n",
				"client": "rdma_client: start\nrdma_client: end 0\n"}[role]
			if r.Code != 0 || r.Stdout != want || r.Stderr != "" {
				t.Fatalf("%v %s: %v", me, role, r)
			}
		})
	}
}
