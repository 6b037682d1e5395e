package pingpong

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// run is how one program of a pair ended.
type run struct {
	stdout, stderr string
	status         int // -1: killed at the limit
}

// siwHex masks what differs from run to run in a pingpong's output:
// QPNs, PSNs and GIDs.
var siwHex = regexp.MustCompile(`0x[0-9a-f]+|GID \S+`)

func (r run) masked() run {
	r.stdout = siwHex.ReplaceAllString(r.stdout, "X")
	return r
}

// siwPair runs prog's server on siw0 and its client on siw1 in the peer
// namespace, connecting to siw0's address, each for at most limit.
func siwPair(t *testing.T, e *testenv.SIWEnv, server, client string, port int, limit time.Duration) (rs, rc run) {
	t.Helper()
	// start starts cmd; ended is closed when it ends, and wait is its run.
	start := func(cmd *exec.Cmd) (wait func() run, ended <-chan struct{}) {
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done, exited := make(chan error, 1), make(chan struct{})
		go func() { done <- cmd.Wait(); close(exited) }()
		return func() run {
			var err error
			select {
			case err = <-done:
			case <-time.After(limit):
				cmd.Process.Kill()
				<-done
				return run{out.String(), errb.String(), -1}
			}
			status := 0
			var xe *exec.ExitError
			if errors.As(err, &xe) {
				status = xe.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return run{out.String(), errb.String(), status}
		}, exited
	}
	p := strconv.Itoa(port)
	waitS, serverEnded := start(exec.Command(server, "-d", e.Dev, "-g", "0", "-p", p))
	// The server's TCP listen, or its early end (the UC and UD ones fail
	// before they listen).
	cmtest.WaitTCPListenOr(uint16(port), 5*time.Second, serverEnded)
	waitC, _ := start(e.PeerCommand(context.Background(), client, "-d", e.PeerDev, "-g", "0", "-p", p, e.Addr.String()))
	rc = waitC()
	rs = waitS()
	return rs, rc
}

// TestIntegrationSIWPingpongFails: the pingpongs cannot work on iWARP
// (an RC QP reaches RTS only through iw_cm's connection; siw has no UC
// or UD QPs). Ours fails exactly as rdma-core's does, in each role: the
// same text on stdout (but the addresses) and stderr, the same exit
// status, and nothing left behind.
func TestIntegrationSIWPingpongFails(t *testing.T) {
	e := testenv.SIW(t)
	checkNoLeaksOn(t, e.Dev)
	for i, kind := range []Kind{RC, UC, UD, SRQ} {
		t.Run(kindNames[kind], func(t *testing.T) {
			theirs := testenv.Oracle(t, progs[kind])
			ours, err := exec.LookPath(progs[kind])
			if err != nil || ours == theirs {
				t.Fatalf("our %s: %q, %v", progs[kind], ours, err)
			}
			// rdma-core's srq_pingpong client spins until its limit
			// (below): 10 s, five times what rdma-core's programs take
			// to fail on a loaded host. Ours must end by itself; it gets
			// a minute, which a loaded host needs (ours' srq server,
			// killed at 20 s, was still at work on a host at load 15).
			ts, tc := siwPair(t, e, theirs, theirs, 18900+2*i, 10*time.Second)
			ous, ouc := siwPair(t, e, ours, ours, 18901+2*i, time.Minute)
			if tc.status == 0 || ts.status == 0 {
				t.Fatalf("rdma-core's %s worked on siw: server %+v, client %+v", progs[kind], ts, tc)
			}
			for _, c := range []struct {
				role         string
				theirs, ours run
			}{{"server", ts, ous}, {"client", tc, ouc}} {
				if c.theirs.status == -1 {
					// rdma-core's srq_pingpong client spins for ever on a
					// server that hung up (it adds a read's 0 bytes and reads
					// again): ours ends, and says which record it missed.
					if c.ours.status != 1 {
						t.Errorf("%s %s: ours %+v where rdma-core's hangs", progs[kind], c.role, c.ours)
					}
					continue
				}
				if c.ours.masked() != c.theirs.masked() {
					t.Errorf("%s %s: ours %+v\nrdma-core's %+v", progs[kind], c.role, c.ours, c.theirs)
				}
			}
		})
	}
}
