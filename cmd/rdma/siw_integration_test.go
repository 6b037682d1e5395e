package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// siwTools runs rdma-core tools that hold live objects on the siw guest's
// devices: ibv_rc_pingpong's server on Dev (a context, PD, MR, CQs and an
// RC QP in INIT: an iWARP QP goes further only through iw_cm),
// ibv_srq_pingpong's on PeerDev (an SRQ and its QPs) and rping listening
// on Dev's address (a cm_id; its verbs objects come with a connection).
// It returns the RC QP's number.
func siwTools(t *testing.T, e *testenv.SIWEnv) uint32 {
	t.Helper()
	testenv.Start(t, "ibv_srq_pingpong", "-d", e.PeerDev, "-g", "0", "-p", "18712", "-q", "6")
	testenv.Start(t, "rping", "-s", "-a", e.Addr.String(), "-p", "18713")
	lqpn := testenv.StartRCServer(t, e.Dev, 0, 18711)
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testenv.WaitFor(t, "the tools' objects", func() bool {
		sums, err := c.ResourceSummary()
		if err != nil {
			t.Fatal(err)
		}
		var n [5]uint64
		for _, s := range sums {
			for i, r := range []nldev.ResourceType{nldev.ResourceCMID, nldev.ResourceCtx, nldev.ResourceSRQ, nldev.ResourceQP, nldev.ResourceMR} {
				v, _ := s.Count(r)
				n[i] += v
			}
		}
		return n[0] >= 1 && n[1] >= 2 && n[2] >= 1 && n[3] >= 7 && n[4] >= 2
	})
	return lqpn
}

// siwConnection runs an rping pair that stays connected for the test:
// the server on Dev, the client on PeerDev in the peer namespace (the
// layout TestIntegrationSIWRping uses on both kernels), pinging on, each
// with a connected cm_id, a QP and MRs, which do not change while they
// ping.
func siwConnection(t *testing.T, e *testenv.SIWEnv) {
	t.Helper()
	rping := testenv.Oracle(t, "rping")
	var srvOut testenv.Buffer
	srv := exec.Command(rping, "-s", "-a", e.Addr.String(), "-p", "18714", "-C", "1000000")
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.Stop(srv) })
	var cli *exec.Cmd
	var cliOut testenv.Buffer
	var done chan struct{}
	t.Cleanup(func() {
		if cli != nil {
			cli.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ended := cli == nil
		if !ended {
			select {
			case <-done:
				ended = true // it came before the server listened
			default:
			}
		}
		if ended {
			cli = e.PeerCommand(context.Background(), rping, "-c", "-a", e.Addr.String(), "-p", "18714", "-C", "1000000", "-S", "64")
			cli.Stdout, cli.Stderr = &cliOut, &cliOut
			if err := cli.Start(); err != nil {
				t.Fatal(err)
			}
			c, d := cli, make(chan struct{})
			go func() { c.Wait(); close(d) }()
			done = d
		}
		// Both ends' cm_ids reach CONNECT; the QPs' state is no sign:
		// 6.1's siw_query_qp leaves qp_state 0, so there every siw QP
		// is listed in RESET (6.12's reports INIT and RTS).
		ids, _ := ours(t, "res", "show", "cm_id")
		if strings.Count(ids, "state CONNECT ") >= 2 {
			qps, _ := ours(t, "res", "show", "qp", "link", e.Dev)
			t.Logf("connected; the QPs of %s:\n%s", e.Dev, qps)
			return
		}
		if time.Now().After(deadline) {
			qps, _ := ours(t, "res", "show", "qp")
			t.Fatalf("no rping connection after 30 s: cm_ids %q, QPs %q; server said %q, clients %q", ids, qps, srvOut.String(), cliOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestIntegrationSIWResourceShow compares "rdma res" on the siw guest's
// iWARP devices with iproute2's, text and JSON, while the tools hold
// objects and an rping pair is connected: every object kind, the
// filters, -d, and the raw forms (siw has no driver-specific or raw
// attributes).
func TestIntegrationSIWResourceShow(t *testing.T) {
	e := testenv.SIW(t)
	dev, peer := e.Dev, e.PeerDev
	lqpn := strconv.FormatUint(uint64(siwTools(t, e)), 10)
	siwConnection(t, e)
	for _, args := range [][]string{
		{"res"}, {"res", "show", dev}, {"res", "show", peer},
		{"res", "show", "qp"}, {"-d", "res", "show", "qp"}, {"-dd", "res", "show", "qp"},
		{"res", "show", "qp", "link", dev}, {"res", "show", "qp", "link", peer + "/-"},
		{"res", "show", "qp", "link", dev + "/1", "lqpn", lqpn}, {"res", "show", "qp", "type", "rc", "state", "init,rts"},
		{"res", "show", "qp", "state", "rts"}, {"-d", "res", "show", "qp", "link", peer},
		{"res", "show", "cm_id"}, {"-d", "res", "show", "cm_id"}, {"res", "show", "cm_id", "dst-port", "18714"},
		{"res", "show", "cm_id", "src-addr", e.Addr.String(), "src-port", "18713"},
		{"res", "show", "cq"}, {"-d", "res", "show", "cq"}, {"res", "show", "cq", "dev", peer},
		{"res", "show", "mr"}, {"-d", "res", "show", "mr"}, {"res", "show", "mr", "dev", dev},
		{"res", "show", "pd"}, {"-d", "res", "show", "pd"}, {"res", "show", "pd", "users", "0-1"},
		{"res", "show", "ctx"}, {"res", "show", "ctx", "dev", peer},
		{"res", "show", "srq"}, {"-d", "res", "show", "srq"}, {"res", "show", "srq", "dev", peer},
		// Bad input: both fail, or both only complain.
		{"res", "show", "qp", "link", dev + "/0"}, {"res", "show", "qp", "link", dev + "/2"},
		{"res", "show", "cq", "dev", "siw9"}, {"res", "show", "siw9"},
		{"-r", "res", "show", "qp"}, {"-r", "res", "show", "cq"}, {"-r", "res", "show", "mr"},
	} {
		compareRes(t, args...)
	}
	if !iproute2Before(t, 6, 7) {
		compareRes(t, "-r", "res", "show", "srq")
	}
}

// TestIntegrationSIWStat compares "rdma statistic" on the siw guest's
// devices with iproute2's, text and JSON, while a QP and an MR exist. siw
// allocates no hardware counters, so the kernel has no counter to show,
// no mode to set and no QP to bind: both tools must say so alike.
func TestIntegrationSIWStat(t *testing.T) {
	e := testenv.SIW(t)
	dev := e.Dev
	link := dev + "/1"
	lqpn := strconv.FormatUint(uint64(siwTools(t, e)), 10)
	for _, args := range [][]string{{"stat", "show"}, {"stat", "qp", "mode"}, {"stat", "mode", "supported", "link", link}} {
		out, ok := iproute2(t, args...)
		t.Logf("iproute2 rdma %q on siw: ok=%v %q", args, ok, out)
	}
	for _, args := range [][]string{
		{"statistic"}, {"stat", "show"}, {"-p", "stat", "show"}, {"stat", "show", "link"},
		{"stat", "show", "link", link}, {"stat", "show", "link", e.PeerDev}, {"stat", "show", "link", dev + "/2"},
		{"stat", "show", "mr"}, {"stat", "mr", "mrn", "0-1000000"},
		{"stat", "qp"}, {"stat", "qp", "show", "link", link, "lqpn", lqpn},
		{"stat", "qp", "mode"}, {"stat", "qp", "mode", "link", dev}, {"stat", "mode"},
		{"stat", "mode", "supported", "link", link},
	} {
		statDiffer(t, false, args...)
		want, _ := iproute2(t, append([]string{"-j"}, args...)...)
		got, _ := ours(t, append([]string{"-j"}, args...)...)
		if want == "" && got == "" {
			continue
		}
		var w, g any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatalf("iproute2 -j %q: %v in %q", args, err, want)
		}
		if err := json.Unmarshal([]byte(got), &g); err != nil {
			t.Fatalf("ours -j %q: %v in %q", args, err, got)
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("rdma -j %q (-iproute2 +ours):\n%s", args, diff)
		}
	}
	// What would change state, were siw to count: the kernel refuses it,
	// in both tools alike (the last leaves auto mode off either way).
	for _, args := range [][]string{
		{"stat", "qp", "set", "link", link, "auto", "type", "on"},
		{"stat", "qp", "bind", "link", link, "lqpn", lqpn},
		{"stat", "qp", "unbind", "link", link, "cntn", "0", "lqpn", lqpn},
		{"stat", "set", "link", link, "optional-counters", "nosuch"},
		{"stat", "unset", "link", link, "optional-counters"},
		{"stat", "qp", "set", "link", link, "auto", "off"},
	} {
		statDiffer(t, false, args...)
	}
}
