package testenv

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Start runs an oracle tool in the background (its output kept apart);
// cleanup kills it and waits. Killing it earlier is fine: the cleanup then
// does nothing more.
func Start(t testing.TB, tool string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(Oracle(t, tool), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", tool, err)
	}
	t.Cleanup(func() { Stop(cmd) })
	return cmd
}

// Stop kills a tool Start started and waits for it; the kernel has
// released its objects once its files are closed.
func Stop(cmd *exec.Cmd) {
	cmd.Process.Kill()
	cmd.Wait()
}

// WaitFor polls cond until it holds, for up to 20 s (TCG is slow), and
// fails the test otherwise.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// StartRCServer runs rdma-core's ibv_rc_pingpong as a server on dev and TCP
// port, with GID index gidx (1 on rxe, whose index 0 is the link-local
// address; 0 on siw, which has only its MAC's): it creates an RC QP (with
// a PD, CQ and MR) and waits for a client that never comes. It returns
// the QP's number as iproute2 lists it for the tool's pid.
func StartRCServer(t testing.TB, dev string, gidx, port int) uint32 {
	t.Helper()
	cmd := Start(t, "ibv_rc_pingpong", "-d", dev, "-g", strconv.Itoa(gidx), "-p", strconv.Itoa(port))
	rdma := Oracle(t, "rdma")
	var lqpn uint32
	WaitFor(t, "ibv_rc_pingpong's QP", func() bool {
		var qps []map[string]any
		if err := json.Unmarshal(Run(t, rdma, "-j", "resource", "show", "qp", "link", dev+"/1"), &qps); err != nil {
			t.Fatal(err)
		}
		for _, qp := range qps {
			if qp["pid"] == float64(cmd.Process.Pid) && qp["type"] == "RC" {
				lqpn = uint32(qp["lqpn"].(float64))
				return true
			}
		}
		return false
	})
	return lqpn
}

// RCPingpong runs a pair of rdma-core's ibv_rc_pingpong, server and client
// both on dev (the client reaches the server's TCP port on 127.0.0.1), for
// iters round trips: each side sends iters messages. A pair that fails
// fails the test.
func RCPingpong(t testing.TB, dev string, port, iters int) {
	t.Helper()
	args := []string{"-d", dev, "-g", "1", "-p", strconv.Itoa(port), "-n", strconv.Itoa(iters)}
	srv := Start(t, "ibv_rc_pingpong", args...)
	tool := Oracle(t, "ibv_rc_pingpong")
	var out string
	ok := false
	for try := 0; try < 50 && !ok; try++ {
		if out, ok = Output(t, tool, append(args, "127.0.0.1")...); !ok {
			time.Sleep(100 * time.Millisecond) // the server is not listening yet
		}
	}
	if !ok {
		t.Fatalf("ibv_rc_pingpong client on %s failed:\n%s", dev, out)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("ibv_rc_pingpong server on %s: %v", dev, err)
	}
}
