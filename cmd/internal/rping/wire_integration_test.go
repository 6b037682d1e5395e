package rping

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestWireRping: ours against rdma-core's rping -V across the wire, in
// both roles (side 0's guest serves, side 1's connects; the pairs of
// test/vm put each kernel on each side), 10 validated pings of 1 KiB and
// of the largest size. Each side checks its own output; nothing is left
// on either device.
func TestWireRping(t *testing.T) {
	w, dev := rxetest.Wire(t)
	wirePings(t, w, dev, []int{1024, bufSize - 1}, 10)
}

// TestWireSIWRping: TestWireRping on Soft-iWARP (siw0 alone on eth0 in
// both guests: the CM over iw_cm across the two kernels' TCP), at the
// smallest size too; then, under netem's loss 1% and reorder 5% on both
// guests' egress (iWARP recovers in TCP), 50 validated pings of the
// largest size in both roles, data intact.
func TestWireSIWRping(t *testing.T) {
	w, dev := rxetest.WireSIW(t)
	wirePings(t, w, dev, []int{minSize, 1024, bufSize - 1}, 10)
	t.Run("netem", func(t *testing.T) {
		w.Netem(t, "loss 1% delay 1ms reorder 5%")
		wirePings(t, w, dev, []int{bufSize - 1}, 50)
	})
}

// wirePings runs count validated pings of each size, ours against
// rdma-core's rping -V in both roles across the wire.
func wirePings(t *testing.T, w *testenv.WireEnv, dev uint32, sizes []int, count int) {
	ours, theirs := sides(t)
	for _, size := range sizes {
		for _, pair := range [][2]cmtest.Side{{ours, theirs}, {theirs, ours}} {
			t.Run(fmt.Sprintf("%d/%v-%v", size, pair[0], pair[1]), func(t *testing.T) {
				cmtest.NoCMIDsLeft(t, dev)
				common := []string{"-S", strconv.Itoa(size), "-C", strconv.Itoa(count), "-v", "-V"}
				exp := want(size, count)
				p := cmtest.WirePair{Server: pair[0], Client: pair[1], Limit: 120 * time.Second,
					ServerArgs: func(self netip.Addr, port string) []string {
						return append([]string{"-s", "-a", self.String(), "-p", port}, common...)
					},
					ClientArgs: func(peer netip.Addr, port string) []string {
						return append([]string{"-c", "-a", peer.String(), "-p", port}, common...)
					},
				}
				me, role, r := p.Run(t, w, dev)
				r = settle(me, r)
				switch {
				case r.Code != 0:
					t.Fatalf("%v %s: %v", me, role, r)
				case role == "client" && r.Stdout != exp:
					t.Fatalf("%v client's ping data:\n%s\nwant:\n%s", me, r.Stdout, exp)
				case role == "server" && r.Stdout != strings.ReplaceAll(exp, "ping data: ", "server ping data: "):
					t.Fatalf("%v server's ping data:\n%s", me, r.Stdout)
				case role == "server" && !strings.Contains(r.Stderr, "server DISCONNECT EVENT..."):
					t.Fatalf("%v server did not report the disconnect:\n%s", me, r.Stderr)
				}
			})
		}
	}
}
