package rping

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testenv"
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

// pingPair runs a server and a client with -v -V and checks both
// outputs line by line. rping against an rping can lose its own exit
// race (rdma_get_cm_event: Bad file descriptor) now and then: a pair
// with rdma-core's program in it gets one retry.
func pingPair(t *testing.T, addr netip.Addr, dev uint32, server, client cmtest.Side, size, count int) {
	t.Helper()
	tries := 1
	if server.Oracle != "" || client.Oracle != "" {
		tries = 2
	}
	var failure string
	for range tries {
		port := cmtest.Port()
		common := []string{"-a", addr.String(), "-p", strconv.Itoa(int(port)), "-S", strconv.Itoa(size), "-C", strconv.Itoa(count), "-v", "-V"}
		waitS := server.Start(append([]string{"-s"}, common...), 60*time.Second)
		if err := cmtest.WaitListen(dev, netip.AddrPortFrom(addr, port), 20*time.Second); err != nil {
			t.Fatalf("%v server: %v\n%v", server, err, waitS())
		}
		rc := client.Start(append([]string{"-c"}, common...), 60*time.Second)()
		rs := waitS()
		exp := want(size, count)
		switch {
		case rc.Code != 0 || rs.Code != 0:
			failure = fmt.Sprintf("%v server: %v\n%v client: %v", server, rs, client, rc)
		case rc.Stdout != exp:
			failure = fmt.Sprintf("%v client's ping data:\n%s\nwant:\n%s", client, rc.Stdout, exp)
		case rs.Stdout != strings.ReplaceAll(exp, "ping data: ", "server ping data: "):
			failure = fmt.Sprintf("%v server's ping data:\n%s", server, rs.Stdout)
		case !strings.Contains(rs.Stderr, "server DISCONNECT EVENT..."):
			failure = fmt.Sprintf("%v server did not report the disconnect:\n%s", server, rs.Stderr)
		default:
			return
		}
		t.Logf("try failed: %s", failure)
	}
	t.Fatal(failure)
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
