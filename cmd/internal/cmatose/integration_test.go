package cmatose

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func ours(stdout, stderr io.Writer, args []string) error {
	return Main("ucmatose", stdout, stderr, args)
}

func sides(t *testing.T) (cmtest.Side, cmtest.Side) {
	return cmtest.Side{Name: "ours", Main: ours}, cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(t, "ucmatose")}
}

// What ucmatose prints in each role after a good run with messages.
const (
	serverOut = "cmatose: starting server\ninitiating data transfers\ncompleting sends\nreceiving data transfers\n" +
		"data transfers complete\ncmatose: disconnecting\ndisconnected\ntest complete\nreturn status 0\n"
	clientOut = "cmatose: starting client\ncmatose: connecting\nreceiving data transfers\nsending replies\n" +
		"data transfers complete\ntest complete\nreturn status 0\n"
)

// run runs a server and a client with extra arguments and checks both
// outputs.
func run(t testing.TB, addr netip.Addr, dev uint32, server, client cmtest.Side, extra ...string) {
	t.Helper()
	runWant(t, addr, dev, server, client, serverOut, clientOut, extra...)
}

// runWant is run with the outputs each side must print.
func runWant(t testing.TB, addr netip.Addr, dev uint32, server, client cmtest.Side, serverOut, clientOut string, extra ...string) {
	t.Helper()
	port := cmtest.Port()
	p := []string{"-p", strconv.Itoa(int(port))}
	waitS := server.Start(append(append([]string{"-b", addr.String()}, p...), extra...), 120*time.Second)
	if err := cmtest.WaitListen(dev, netip.AddrPortFrom(addr, port), 20*time.Second); err != nil {
		t.Fatalf("%v server: %v\n%v", server, err, waitS())
	}
	rc := client.Start(append(append([]string{"-s", addr.String()}, p...), extra...), 120*time.Second)()
	rs := waitS()
	if rc.Code != 0 || rs.Code != 0 || rs.Stdout != serverOut || rc.Stdout != clientOut {
		t.Fatalf("%v server: %v\n%v client: %v", server, rs, client, rc)
	}
}

// TestIntegrationUcmatose: 4 connections of 10 messages of 100 bytes
// each way, ours against ours and against rdma-core's in both roles.
func TestIntegrationUcmatose(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	o, r := sides(t)
	for _, pair := range [][2]cmtest.Side{{o, o}, {r, o}, {o, r}} {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			run(t, addr, dev, pair[0], pair[1], "-c", "4", "-C", "10", "-S", "100")
		})
	}
}

// TestIntegrationUcmatoseOptions: -t (type of service), -a (ACK timeout)
// and -m (both sides move their ids to a new event channel before the
// disconnect), ours against ours and against rdma-core's in both roles:
// the options are taken without complaint, and the migrated ids still
// see the disconnect.
func TestIntegrationUcmatoseOptions(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	o, r := sides(t)
	const mig = "migrating to new event channel\n"
	sOut := strings.Replace(serverOut, "cmatose: disconnecting\n", mig+"cmatose: disconnecting\n", 1)
	cOut := strings.Replace(clientOut, "test complete\n", mig+"test complete\n", 1)
	for _, pair := range [][2]cmtest.Side{{o, o}, {r, o}, {o, r}} {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			runWant(t, addr, dev, pair[0], pair[1], sOut, cOut, "-c", "2", "-C", "4", "-t", "32", "-a", "16", "-m")
		})
	}
}

// TestIntegrationUcmatoseErrors: bad command lines, and a client with
// no server, end as rdma-core's do (output and exit status).
func TestIntegrationUcmatoseErrors(t *testing.T) {
	addr, _ := cmtest.RxeAddr(t)
	o, r := sides(t)
	nobody := []string{"-s", addr.String(), "-p", strconv.Itoa(int(cmtest.Port())), "-c", "2"}
	for _, args := range [][]string{{"-x"}, {"-s"}, {"-c"}, nobody} {
		rt := r.Start(args, 30*time.Second)()
		ro := o.Start(args, 30*time.Second)()
		// rdma-core's names itself by argv[0], the full path.
		rt.Stdout = strings.ReplaceAll(rt.Stdout, r.Oracle, "ucmatose")
		rt.Stderr = strings.ReplaceAll(rt.Stderr, r.Oracle, "ucmatose")
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
	}
}
