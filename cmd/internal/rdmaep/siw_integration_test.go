package rdmaep

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// selfProg names the program the test binary is when it runs as ours
// (cmtest.Self): rdma_server or rdma_client.
const selfProg = "RDMAEP_SELF_PROG"

// TestMain lets the test binary be rdma_server or rdma_client
// (cmtest.Self, selfClient): the client in the siw peer's namespace must
// be a process.
func TestMain(m *testing.M) {
	cmtest.RunSelf(func(stdout, stderr io.Writer, args []string) error {
		if os.Getenv(selfProg) == "rdma_server" {
			return ServerMain(stdout, stderr, args)
		}
		return ClientMain(stdout, stderr, args)
	})
	os.Exit(m.Run())
}

// selfClient is our rdma_client as a process.
func selfClient() cmtest.Side {
	s := cmtest.Self("ours")
	s.Env = append(s.Env, selfProg+"=rdma_client")
	return s
}

// TestIntegrationSIWRdmaServerClient: on Soft-iWARP, the 16-byte
// exchange (rdma_create_ep's synchronous ids, a send and a receive each
// way, the disconnect), ours against ours and against rdma-core's in
// both roles: the server on siw0, the client on siw1 in the peer
// namespace (ours there as a process). Each side's output and status are
// checked; nothing is left on the device.
func TestIntegrationSIWRdmaServerClient(t *testing.T) {
	e, dev := cmtest.SIW(t)
	srv, cli := sides(t)
	oPeer, rPeer := selfClient().InNetns(e.PeerNetns), cli[1].InNetns(e.PeerNetns)
	for _, pair := range [][2]cmtest.Side{{srv[0], oPeer}, {srv[1], oPeer}, {srv[0], rPeer}} {
		server, client := pair[0], pair[1]
		t.Run(fmt.Sprintf("%v-%v", server, client), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			cmtest.NoQPsLeft(t, dev)
			port := cmtest.Port()
			p := []string{"-s", e.Addr.String(), "-p", strconv.Itoa(int(port))}
			waitS := server.Start(p, 60*time.Second)
			if err := cmtest.WaitListen(dev, netip.AddrPortFrom(e.Addr, port), 20*time.Second); err != nil {
				t.Fatalf("%v server: %v\n%v", server, err, waitS())
			}
			rc := client.Start(p, 60*time.Second)()
			rs := waitS()
			if rs.Code != 0 || rs.Stdout != "rdma_server: start\nrdma_server: end 0\n" || rs.Stderr != "" ||
				rc.Code != 0 || rc.Stdout != "rdma_client: start\nrdma_client: end 0\n" || rc.Stderr != "" {
				t.Fatalf("%v server: %v\n%v client: %v", server, rs, client, rc)
			}
		})
	}
}
