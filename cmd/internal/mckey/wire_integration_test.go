package mckey

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// wireMckey runs this guest's end of an mckey run across w on group:
// side 0's guest runs the receiver (recvC datagrams), side 1's, once the
// receiver has resolved the group, the sender (sendC datagrams). Each
// binds to its own address. It returns the Side that ran here, its role
// and how it ended; the receiver is killed limit after its start.
func wireMckey(t *testing.T, w *testenv.WireEnv, dev uint32, recv, send cmtest.Side, group netip.Addr, recvC, sendC int, limit time.Duration) (cmtest.Side, string, cmtest.Result) {
	t.Helper()
	p := cmtest.WirePair{Server: recv, Client: send, Limit: limit,
		ServerArgs: func(self netip.Addr, _ string) []string {
			return []string{"-m", group.String(), "-b", self.String(), "-S", "100", "-C", fmt.Sprint(recvC)}
		},
		ClientArgs: func(netip.Addr, string) []string {
			return []string{"-m", group.String(), "-b", w.Self.String(), "-S", "100", "-s", "-C", fmt.Sprint(sendC)}
		},
		Ready: func(uint16) error { return waitMember(dev, group) },
	}
	me, role, r := p.Run(t, w, dev)
	return me, map[string]string{"server": "receiver", "client": "sender"}[role], r
}

// wirePairs are the pairs (receiver, sender) of the wire tests: ours
// against rdma-core's in both roles, ours against ours, and rdma-core's
// against itself, the control that tells the kernel's multicast
// failures from ours.
func wirePairs(t *testing.T) [][2]cmtest.Side {
	o, r := sides(t)
	return [][2]cmtest.Side{{o, r}, {r, o}, {o, o}, {r, r}}
}

// TestWireMckeyJoin: across the wire, a receiver (side 0's guest) and a
// sender (side 1's) join a group, print its MGID, pause and leave,
// without messages: ours against rdma-core's in both roles and against
// ours. It does not depend on multicast delivery and must work in every
// pair.
func TestWireMckeyJoin(t *testing.T) {
	w, dev := rxetest.Wire(t)
	for i, p := range wirePairs(t)[:3] {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			group := netip.AddrFrom4([4]byte{239, 1, 4, byte(20 + i)})
			me, role, r := wireMckey(t, w, dev, p[0], p[1], group, 0, 0, 30*time.Second)
			if r.Code != 0 || !want(role == "sender", group, false).MatchString(r.Stdout) || r.Stderr != "" {
				t.Fatalf("%v %s: %v", me, role, r)
			}
		})
	}
}

// TestWireMckeyData: across the wire, the sender (side 1's guest) sends
// 30 datagrams of 100 bytes to the group, the receiver (side 0's) waits
// for 10 (UD may drop some); ours against rdma-core's in both roles,
// ours against ours, and rdma-core's against itself. The sender must
// always succeed. The receiver must get the datagrams, except where
// 6.12 is on either side: there it may get nothing (the flake of 6.12's
// rxe multicast that TestIntegrationMckeyData meets on one guest), and
// rdma-core's pair fails as ours do. Seen: in 6.12↔6.12 rdma-core's
// receiver from our sender; in 6.1↔6.12 (a 6.1 receiver, a 6.12 sender)
// rdma-core's sender to ours and to rdma-core's own receiver, while
// ours reached both (each pair delivered in most runs). In test/vm's
// cross pairs delivery is therefore logged, not required; its 6.1↔6.1
// pair requires it. A receiver that got
// nothing must still be waiting, joined, when it is killed, and fail
// in no other way. Every pair's join, leave and CM events are
// TestWireMckeyJoin's, which must always pass.
func TestWireMckeyData(t *testing.T) {
	w, dev := rxetest.Wire(t)
	flaky := strings.HasPrefix(testenv.KernelRelease(), "6.12") || strings.HasPrefix(w.PeerKernel, "6.12")
	for i, p := range wirePairs(t) {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			group := netip.AddrFrom4([4]byte{239, 1, 5, byte(20 + i)})
			me, role, r := wireMckey(t, w, dev, p[0], p[1], group, 10, 30, 8*time.Second)
			ok := r.Code == 0 && want(role == "sender", group, true).MatchString(r.Stdout) && r.Stderr == ""
			switch {
			case ok:
			case role == "receiver" && flaky && r.Code == -1 &&
				// The kill is SIGQUIT first: ours (a Go process) prints its stacks.
				(r.Stderr == "" || strings.HasPrefix(r.Stderr, "SIGQUIT: quit\n")) &&
				// rdma-core's stdout, a pipe, is fully buffered: the kill loses it.
				(joined(group).MatchString(r.Stdout) || me.Name == "rdma-core" && r.Stdout == ""):
				t.Logf("%v receiver on %s got no datagrams from the sender on %s (6.12's multicast flake); it was killed",
					me, testenv.KernelRelease(), w.PeerKernel)
			default:
				t.Fatalf("%v %s: %v", me, role, r)
			}
		})
	}
}

// joined matches what a receiver prints until its datagrams come: the
// role and the join.
func joined(group netip.Addr) *regexp.Regexp {
	s := want(false, group, false).String()
	return regexp.MustCompile(s[:strings.Index(s, "test complete")] + "(receiving data transfers\n)?$")
}
