package perftest

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/rdma"
)

// TestWireSIWPerftest: on Soft-iWARP across the wire (siw0 alone on eth0
// in both guests, iWARP over the two kernels' TCP), ib_send_bw,
// ib_write_bw and ib_read_bw at 64 KiB and ib_write_lat over rdma_cm (-R,
// the only way an iWARP QP is connected), ours against perftest's in
// both roles (side 0's guest serves), each side's table checked, nothing
// left on either device.
func TestWireSIWPerftest(t *testing.T) {
	w, dev := rxetest.WireSIW(t)
	for _, tc := range []struct {
		prog string
		size int
	}{{"ib_send_bw", 65536}, {"ib_write_bw", 65536}, {"ib_read_bw", 65536}, {"ib_write_lat", 2}} {
		// Ours as a process, which a run's limit kills.
		ours := end{prog: tc.prog, self: true, limit: time.Minute}
		theirs := end{prog: tc.prog, oracle: true, limit: time.Minute}
		for _, roles := range [][2]end{{ours, theirs}, {theirs, ours}} {
			t.Run(fmt.Sprintf("%s/server=%v", tc.prog, roles[0]), func(t *testing.T) {
				cmtest.WireDone(t, w)
				cmtest.NoCMIDsLeft(t, dev)
				cmtest.NoQPsLeft(t, dev)
				const iters = 200
				args := []string{"-d", w.Dev, "-R", "-F", "-n", strconv.Itoa(iters), "-s", strconv.Itoa(tc.size)}
				server, client := wirePair(t, w, dev, roles, args, true)
				checkOutputs(t, tc.prog, true, tc.size, iters, server, client)
			})
		}
	}
}

// TestWireSIWPerftestPeerKilled: ib_write_bw -R across the wire on
// Soft-iWARP, ours in-process on one side and perftest's on the other,
// which is SIGKILLed once the transfer runs (a duration run of 60 s):
// ours, server or client, must fail within PeerGoneBound of the kill
// (the server hears nothing but the CM's DISCONNECTED on its exchange
// connection, the client's writes flush), with nothing left behind:
// fds, goroutines and the kernel objects of `rdma resource`.
func TestWireSIWPerftestPeerKilled(t *testing.T) {
	w, dev := rxetest.WireSIW(t)
	for _, oursServer := range []bool{true, false} {
		t.Run(fmt.Sprintf("ours-server=%v", oursServer), func(t *testing.T) {
			cmtest.WireDone(t, w)
			cmtest.NoCMIDsLeft(t, dev)
			cmtest.NoQPsLeft(t, dev)
			oursHere := (w.Side == 0) == oursServer
			if oursHere {
				// The device cache's contexts and event sockets stay
				// open for the process: open them before counting.
				list, err := rdma.GetDevices()
				if err != nil {
					t.Fatal(err)
				}
				rdma.FreeDevices(list)
				rxetest.NoLeaks(t, &dev)
			}
			peerKilled(t, w, dev, oursHere)
		})
	}
}

// peerKilled is one run of TestWireSIWPerftestPeerKilled.
func peerKilled(t *testing.T, w *testenv.WireEnv, dev uint32, oursHere bool) {
	t.Helper()
	args := []string{"-d", w.Dev, "-R", "-F", "-s", "65536", "-D", "60"}
	var port string
	if w.Side == 0 {
		port = strconv.Itoa(int(nextPort.Add(1)))
		args = append(args, "-p", port)
	} else {
		port = w.Exchange(t, t.Name()+"/port", "")
		args = append(args, "-p", port, w.Peer.String())
	}
	// Ours runs in-process and its end is timed; perftest's runs as a
	// process, to be killed.
	type ended struct {
		r  result
		at time.Time
	}
	done := make(chan ended, 1)
	var cmd *exec.Cmd
	var out bytes.Buffer
	if oursHere {
		wait := end{prog: "ib_write_bw"}.start(t, args)
		go func() {
			r := wait()
			done <- ended{r, time.Now()}
		}()
	} else {
		cmd = exec.Command(testenv.Oracle(t, "ib_write_bw"), args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	if w.Side == 0 {
		testenv.WaitFor(t, "the server to listen", func() bool { return cmListening(t, dev, mustAtoi(t, port)) })
		w.Exchange(t, t.Name()+"/port", port)
	}
	// The control QP and the test QP, connected: the transfer is about
	// to run on this side.
	ready := "running"
	for deadline := time.Now().Add(20 * time.Second); userRCQPs(t, dev) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			ready = "not running after 20 s"
			break
		}
	}
	if peer := w.Exchange(t, t.Name()+"/running", ready); ready != "running" || peer != "running" {
		t.Fatalf("the test QP: here %s, at the peer %s", ready, peer)
	}
	if !oursHere {
		time.Sleep(3 * time.Second) // well into the transfer
		cmd.Process.Kill()
		err := cmd.Wait()
		w.Sync(t, t.Name()+"/killed")
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			t.Fatalf("perftest's ib_write_bw was not killed, it ended: %v\n%s", err, out.String())
		}
		return
	}
	w.Sync(t, t.Name()+"/killed")
	killed := time.Now()
	var e ended
	select {
	case e = <-done:
	case <-time.After(PeerGoneBound + 30*time.Second):
		t.Fatalf("ours still runs %v after the peer was killed", time.Since(killed))
	}
	if took := e.at.Sub(killed); took > PeerGoneBound {
		t.Errorf("ours ended %v after the peer was killed, beyond %v", took, PeerGoneBound)
	}
	if e.r.err != nil || e.r.code == 0 {
		t.Fatalf("ours did not fail (status %d, %v)\nstdout:\n%s\nstderr:\n%s", e.r.code, e.r.err, e.r.stdout, e.r.stderr)
	}
	t.Logf("ours (status %d) after the kill:\n%s", e.r.code, e.r.stderr)
}

// userRCQPs counts the RC QPs of user processes on dev.
func userRCQPs(t testing.TB, dev uint32) int {
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	qps, err := nl.QPs(dev)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, qp := range qps {
		if qp.Type == ib.QPTypeRC && qp.Owner.PID != 0 {
			n++
		}
	}
	return n
}

func mustAtoi(t testing.TB, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
