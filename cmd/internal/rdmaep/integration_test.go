package rdmaep

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func sides(t *testing.T) (server, client [2]cmtest.Side) {
	return [2]cmtest.Side{{Name: "ours", Main: ServerMain}, {Name: "rdma-core", Oracle: testenv.Oracle(t, "rdma_server")}},
		[2]cmtest.Side{{Name: "ours", Main: ClientMain}, {Name: "rdma-core", Oracle: testenv.Oracle(t, "rdma_client")}}
}

// TestIntegrationRdmaServerClient: the 16-byte exchange, ours against
// ours and against rdma-core's in both roles; both end with status 0
// only if each side's send and receive completed successfully.
func TestIntegrationRdmaServerClient(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	srv, cli := sides(t)
	for _, pair := range [][2]int{{0, 0}, {1, 0}, {0, 1}} {
		server, client := srv[pair[0]], cli[pair[1]]
		t.Run(fmt.Sprintf("%v-%v", server, client), func(t *testing.T) {
			port := cmtest.Port()
			p := []string{"-s", addr.String(), "-p", strconv.Itoa(int(port))}
			waitS := server.Start(p, 60*time.Second)
			if err := cmtest.WaitListen(dev, netip.AddrPortFrom(addr, port), 20*time.Second); err != nil {
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

// TestIntegrationRdmaServerClientErrors: bad command lines and a client
// with nobody listening end as rdma-core's do (output, exit status).
func TestIntegrationRdmaServerClientErrors(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	srv, cli := sides(t)
	nobody := []string{"-s", addr.String(), "-p", strconv.Itoa(int(cmtest.Port()))}
	for _, tc := range []struct {
		sides [2]cmtest.Side
		args  []string
	}{
		{srv, []string{"-x"}}, {cli, []string{"-s"}}, {cli, nobody}, {srv, []string{"-p", "port"}},
	} {
		o, r := tc.sides[0], tc.sides[1]
		rt := r.Start(tc.args, 30*time.Second)()
		ro := o.Start(tc.args, 30*time.Second)()
		// rdma-core's name themselves by argv[0], the full path, in the usage.
		name := r.Oracle[strings.LastIndex(r.Oracle, "/")+1:]
		rt.Stdout = strings.ReplaceAll(rt.Stdout, r.Oracle, name)
		rt.Stderr = strings.ReplaceAll(rt.Stderr, r.Oracle, name)
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%s %q: ours %v\nrdma-core's %v", name, tc.args, ro, rt)
		}
	}
}
