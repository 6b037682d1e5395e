package rping

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/rxetest"
)

// TestWireRping: ours against rdma-core's rping -V across the wire, in
// both roles (side 0's guest serves, side 1's connects; the pairs of
// test/vm put each kernel on each side), 10 validated pings of 1 KiB and
// of the largest size. Each side checks its own output; nothing is left
// on either device.
func TestWireRping(t *testing.T) {
	w, dev := rxetest.Wire(t)
	ours, theirs := sides(t)
	for _, size := range []int{1024, bufSize - 1} {
		for _, pair := range [][2]cmtest.Side{{ours, theirs}, {theirs, ours}} {
			t.Run(fmt.Sprintf("%d/%v-%v", size, pair[0], pair[1]), func(t *testing.T) {
				cmtest.NoCMIDsLeft(t, dev)
				const count = 10
				common := []string{"-S", strconv.Itoa(size), "-C", strconv.Itoa(count), "-v", "-V"}
				exp := want(size, count)
				if w.Side == 0 {
					server := pair[0]
					port := cmtest.Port()
					waitS := server.Start(append([]string{"-s", "-a", w.Self.String(), "-p", strconv.Itoa(int(port))}, common...), 120*time.Second)
					if err := cmtest.WaitListen(dev, netip.AddrPortFrom(w.Self, port), 20*time.Second); err != nil {
						t.Fatalf("%v server: %v\n%v", server, err, waitS())
					}
					w.Exchange(t, t.Name()+"/port", strconv.Itoa(int(port)))
					rs := settle(server, waitS())
					switch {
					case rs.Code != 0:
						t.Fatalf("%v server: %v", server, rs)
					case rs.Stdout != strings.ReplaceAll(exp, "ping data: ", "server ping data: "):
						t.Fatalf("%v server's ping data:\n%s", server, rs.Stdout)
					case !strings.Contains(rs.Stderr, "server DISCONNECT EVENT..."):
						t.Fatalf("%v server did not report the disconnect:\n%s", server, rs.Stderr)
					}
				} else {
					client := pair[1]
					port := w.Exchange(t, t.Name()+"/port", "")
					rc := settle(client, client.Start(append([]string{"-c", "-a", w.Peer.String(), "-p", port}, common...), 120*time.Second)())
					switch {
					case rc.Code != 0:
						t.Fatalf("%v client: %v", client, rc)
					case rc.Stdout != exp:
						t.Fatalf("%v client's ping data:\n%s\nwant:\n%s", client, rc.Stdout, exp)
					}
				}
				w.Sync(t, t.Name()+"/done")
			})
		}
	}
}
