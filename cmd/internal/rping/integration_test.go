package rping

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func sides(t *testing.T) (ours, theirs cmtest.Side) {
	return cmtest.Side{Name: "ours", Main: Main}, cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(t, "rping")}
}

// want is what -v prints for count pings of size bytes: the client's
// lines ("ping data: ..."), and the server's with "server " before.
func want(size, count int) string {
	var b strings.Builder
	buf := make([]byte, size)
	start := byte('A')
	for i := range count {
		start = fill(buf, i, start)
		fmt.Fprintf(&b, "ping data: %s\n", cstring(buf))
	}
	return b.String()
}

// exitRace is what rdma-core's rping prints when it loses its own exit
// race (rping.c): main's rdma_destroy_event_channel closes the channel
// while cm_thread, done with the last event, asks for the next one;
// rdma_get_cm_event fails with EBADF and cm_thread calls exit(-1), which
// main's exit may or may not beat. It comes after the run (about 1 run
// in 20), so its output is all there before the line.
const exitRace = "rdma_get_cm_event: Bad file descriptor\n"

// settle is r as the run itself ended: for rdma-core's rping, an end in
// its exit race (exitRace last on stderr, status 0 or 255) is the clean
// end, status 0, with that line removed. Ours has no such race: its
// result is kept as it is.
func settle(s cmtest.Side, r cmtest.Result) cmtest.Result {
	if s.Main == nil && strings.HasSuffix(r.Stderr, exitRace) && (r.Code == 0 || r.Code == 255) {
		r.Stderr, r.Code = strings.TrimSuffix(r.Stderr, exitRace), 0
	}
	return r
}

// pingPair runs a server and a client with -v -V and checks both
// outputs line by line; rdma-core's may end in its exit race (settle).
func pingPair(t *testing.T, addr netip.Addr, dev uint32, server, client cmtest.Side, size, count int, extra ...[]string) {
	t.Helper()
	port := cmtest.Port()
	common := []string{"-a", addr.String(), "-p", strconv.Itoa(int(port)), "-S", strconv.Itoa(size), "-C", strconv.Itoa(count), "-v", "-V"}
	sArgs, cArgs := append([]string{"-s"}, common...), append([]string{"-c"}, common...)
	if len(extra) == 2 {
		sArgs, cArgs = append(sArgs, extra[0]...), append(cArgs, extra[1]...)
	}
	waitS := server.Start(sArgs, 60*time.Second)
	if err := cmtest.WaitListen(dev, netip.AddrPortFrom(addr, port), 20*time.Second); err != nil {
		t.Fatalf("%v server: %v\n%v", server, err, waitS())
	}
	rc := settle(client, client.Start(cArgs, 60*time.Second)())
	rs := settle(server, waitS())
	exp := want(size, count)
	switch {
	case rc.Code != 0 || rs.Code != 0:
		t.Fatalf("%v server: %v\n%v client: %v", server, rs, client, rc)
	case rc.Stdout != exp:
		t.Fatalf("%v client's ping data:\n%s\nwant:\n%s", client, rc.Stdout, exp)
	case rs.Stdout != strings.ReplaceAll(exp, "ping data: ", "server ping data: "):
		t.Fatalf("%v server's ping data:\n%s", server, rs.Stdout)
	case !strings.Contains(rs.Stderr, "server DISCONNECT EVENT..."):
		t.Fatalf("%v server did not report the disconnect:\n%s", server, rs.Stderr)
	}
}

// TestIntegrationRping: ours against ours and against rdma-core's in
// both roles, 10 validated pings of the smallest size, 1 KiB and the
// largest (65535 bytes).
func TestIntegrationRping(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	ours, theirs := sides(t)
	for _, size := range []int{minSize, 1024, bufSize - 1} {
		for _, pair := range [][2]cmtest.Side{{ours, ours}, {theirs, ours}, {ours, theirs}} {
			t.Run(fmt.Sprintf("%d/%v-%v", size, pair[0], pair[1]), func(t *testing.T) {
				pingPair(t, addr, dev, pair[0], pair[1], size, 10)
			})
		}
	}
}

// TestIntegrationRpingSelfQP: -q, where the program creates its QP
// itself and moves it with rdma_init_qp_attr's values (the client then
// calls rdma_establish), against rdma-core's with and without -q.
func TestIntegrationRpingSelfQP(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	ours, theirs := sides(t)
	q, none := []string{"-q"}, []string{}
	for _, tc := range []struct {
		name           string
		server, client cmtest.Side
		flags          [][]string
	}{
		{"ours-ours", ours, ours, [][]string{q, q}},
		{"rdma-core-ours", theirs, ours, [][]string{q, q}},
		{"ours-rdma-core", ours, theirs, [][]string{q, q}},
		{"ours-rdma-core-plain", ours, theirs, [][]string{q, none}},
		{"rdma-core-plain-ours", theirs, ours, [][]string{none, q}},
	} {
		t.Run(tc.name, func(t *testing.T) { pingPair(t, addr, dev, tc.server, tc.client, 1024, 10, tc.flags...) })
	}
}

// TestIntegrationRpingPersistent: our binary as a persistent server
// (-P) serves rdma-core's client and then ours, and stays up.
func TestIntegrationRpingPersistent(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	ours, theirs := sides(t)
	bin, err := exec.LookPath("rping")
	if err != nil || bin == theirs.Oracle {
		t.Fatalf("our rping binary: %q, %v (rdma-core's is %s)", bin, err, theirs.Oracle)
	}
	port := cmtest.Port()
	p := []string{"-a", addr.String(), "-p", strconv.Itoa(int(port)), "-C", "3", "-v", "-V"}
	srv := exec.Command(bin, append([]string{"-s", "-P"}, p...)...)
	var out strings.Builder
	srv.Stdout = &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() { srv.Process.Kill(); <-exited })
	if err := cmtest.WaitListen(dev, netip.AddrPortFrom(addr, port), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	exp := want(defaultSize, 3)
	for _, client := range []cmtest.Side{theirs, ours} {
		if r := settle(client, client.Start(append([]string{"-c"}, p...), 60*time.Second)()); r.Code != 0 || r.Stdout != exp {
			t.Fatalf("%v client of a persistent server: %v", client, r)
		}
	}
	select {
	case err := <-exited:
		t.Fatalf("the persistent server exited: %v\n%s", err, out.String())
	case <-time.After(200 * time.Millisecond):
	}
	srv.Process.Kill()
	<-exited
	exited <- nil
	if got := strings.Count(out.String(), "server ping data: rdma-ping-"); got != 6 {
		t.Fatalf("the server printed %d pings, want 6:\n%s", got, out.String())
	}
}

// TestIntegrationRpingErrors: bad command lines and a client with no
// server end as rdma-core's do (output and exit status).
func TestIntegrationRpingErrors(t *testing.T) {
	addr, _ := cmtest.RxeAddr(t)
	ours, theirs := sides(t)
	nobody := []string{"-c", "-a", addr.String(), "-p", strconv.Itoa(int(cmtest.Port()))}
	for i, args := range [][]string{{"-x"}, {}, {"-s", "-S", "10", "-C", "-1"}, {"-c", "-t", "1"}, {"-c", "-S", "65536"}, nobody} {
		rt := theirs.Start(args, 30*time.Second)()
		ro := ours.Start(args, 30*time.Second)()
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
		if i == 5 { // nobody listens
			const line = "cma event RDMA_CM_EVENT_REJECTED, error 8\n"
			if ro.Stderr != line || !strings.Contains(rt.Stderr, line) || ro.Code != 255 {
				t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
			}
		} else if rt.Stderr != ro.Stderr {
			t.Errorf("%q: stderr %q, rdma-core's %q", args, ro.Stderr, rt.Stderr)
		}
	}
}
