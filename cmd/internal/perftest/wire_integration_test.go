package perftest

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestWirePerftest: each of the six programs, ours against perftest's
// across the wire in both roles (side 0's guest serves, side 1's
// connects), 20 iterations (of 4 KiB for bandwidth), one role with the
// exchange over TCP (-c RC) and the other over rdma_cm (-R). Each side
// gets the other's output: both check the result rows and that each
// one's local address is the other's remote address.
// (No -e: perftest's ib_send_lat -e fails on 6.12's rxe, see
// vm-harness.md.)
func TestWirePerftest(t *testing.T) {
	w, dev := rxetest.Wire(t)
	gid := strconv.Itoa(rxetest.GIDIndex(t, "rxe0", w.Self))
	ours, theirs := func(p string) end { return end{prog: p} }, func(p string) end { return end{prog: p, oracle: true} }
	for i, prog := range []string{"ib_send_bw", "ib_write_bw", "ib_read_bw", "ib_send_lat", "ib_write_lat", "ib_read_lat"} {
		size := 4096 // a few packets: the data path, not the throughput
		if strings.HasSuffix(prog, "_lat") {
			size = 2
		}
		// Each program in both roles, one over the TCP exchange and one
		// over rdma_cm (-R), which role takes which alternating from one
		// program to the next: every combination runs, in half the
		// time of all of them for each program (CI's minutes).
		conns := [2]string{"RC", "RC-R"}
		if i%2 == 1 {
			conns = [2]string{"RC-R", "RC"}
		}
		for j, conn := range conns {
			for _, roles := range [][2]end{{ours(prog), theirs(prog)}, {theirs(prog), ours(prog)}}[j : j+1] {
				t.Run(fmt.Sprintf("%s/%s/server=%v", prog, conn, roles[0]), func(t *testing.T) {
					const iters = 20
					args := []string{"-d", w.Dev, "-x", gid, "-F", "-n", strconv.Itoa(iters), "-s", strconv.Itoa(size), "-c", "RC"}
					if conn == "RC-R" {
						args = append(args, "-R")
					}
					server, client := wirePair(t, w, dev, roles, args, conn == "RC-R")
					checkAddrs(t, server, client)
					checkOutputs(t, prog, conn == "RC-R", size, iters, server, client)
				})
			}
		}
	}
}

// wirePair runs roles[0] as the server on side 0 and roles[1] as the
// client on side 1 with args (and -p, and the server's address for the
// client; cm: the server is ready once it listens on rdma_cm, else on
// TCP), fails t unless both end well, and returns both outputs (each
// side gets the other's).
func wirePair(t *testing.T, w *testenv.WireEnv, dev uint32, roles [2]end, args []string, cm bool) (server, client string) {
	t.Helper()
	var r result
	if w.Side == 0 {
		port := int(nextPort.Add(1))
		args = append(args, "-p", strconv.Itoa(port))
		ready := func() bool { return cmtest.TCPListening(uint16(port)) }
		if cm {
			ready = func() bool { return cmListening(t, dev, port) }
		}
		wait := roles[0].start(t, args)
		testenv.WaitFor(t, "the server to listen", ready)
		w.Exchange(t, t.Name()+"/port", strconv.Itoa(port))
		r = wait()
	} else {
		port := w.Exchange(t, t.Name()+"/port", "")
		r = roles[1].start(t, append(args, "-p", port, w.Peer.String()))()
	}
	who := fmt.Sprintf("%v %s", roles[w.Side], map[int]string{0: "server", 1: "client"}[w.Side])
	mine := "ok " + base64.StdEncoding.EncodeToString([]byte(r.stdout))
	if r.err != nil || r.code != 0 {
		mine = "failed"
	}
	peer := w.Exchange(t, t.Name()+"/output", mine)
	if mine != "ok "+base64.StdEncoding.EncodeToString([]byte(r.stdout)) {
		t.Fatalf("%s: status %d %v\nstdout:\n%s\nstderr:\n%s", who, r.code, r.err, r.stdout, r.stderr)
	}
	out, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(peer, "ok "))
	if err != nil || !strings.HasPrefix(peer, "ok ") {
		t.Fatalf("the peer (%v) %s (%v); %s printed:\n%s", roles[1-w.Side], peer, err, who, r.stdout)
	}
	server, client = r.stdout, string(out)
	if w.Side == 1 {
		server, client = client, server
	}
	return server, client
}
