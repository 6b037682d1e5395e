package udaddy

import (
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func ours(stdout, stderr io.Writer, args []string) error {
	return Main("udaddy", stdout, stderr, args)
}

func sides(t *testing.T) (cmtest.Side, cmtest.Side) {
	return cmtest.Side{Name: "ours", Main: ours}, cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(t, "udaddy")}
}

// What udaddy prints in each role after a good run with messages.
const (
	serverOut = "udaddy: starting server\nreceiving data transfers\nsending replies\ndata transfers complete\n" +
		"test complete\nreturn status 0\n"
	clientOut = "udaddy: starting client\nudaddy: connecting\ninitiating data transfers\nreceiving data transfers\n" +
		"data transfers complete\ntest complete\nreturn status 0\n"
)

// TestIntegrationUdaddy: 2 SIDR "connections" of 10 datagrams of 100
// bytes each way (the server's replies addressed from the first
// datagram's completion and GRH), ours against ours and against
// rdma-core's in both roles. udaddy's port is fixed (7174): the pairs
// run one after the other.
func TestIntegrationUdaddy(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	o, r := sides(t)
	for _, pair := range [][2]cmtest.Side{{o, o}, {r, o}, {o, r}} {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			server, client := pair[0], pair[1]
			extra := []string{"-c", "2", "-C", "10", "-S", "100"}
			waitS := server.Start(append([]string{"-b", addr.String()}, extra...), 120*time.Second)
			if err := cmtest.WaitListen(dev, netip.AddrPortFrom(addr, 7174), 20*time.Second); err != nil {
				t.Fatalf("%v server: %v\n%v", server, err, waitS())
			}
			rc := client.Start(append([]string{"-s", addr.String()}, extra...), 120*time.Second)()
			rs := waitS()
			if rc.Code != 0 || rs.Code != 0 || rs.Stdout != serverOut || rc.Stdout != clientOut || rs.Stderr != "" || rc.Stderr != "" {
				t.Fatalf("%v server: %v\n%v client: %v", server, rs, client, rc)
			}
		})
	}
}

// TestIntegrationUdaddyErrors: bad command lines, a client with no
// server (its SIDR request answered "no listener"), and messages larger
// than the active MTU end as rdma-core's do (output and exit status).
func TestIntegrationUdaddyErrors(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	o, r := sides(t)
	for _, args := range [][]string{{"-x"}, {"-s"}, {"-C"}, {"-s", addr.String(), "-c", "2"},
		{"-s", addr.String(), "-S", "5000"}} {
		rt := r.Start(args, 30*time.Second)()
		ro := o.Start(args, 30*time.Second)()
		// rdma-core's names itself by argv[0], the full path.
		rt.Stdout = strings.ReplaceAll(rt.Stdout, r.Oracle, "udaddy")
		rt.Stderr = strings.ReplaceAll(rt.Stderr, r.Oracle, "udaddy")
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
	}
}
