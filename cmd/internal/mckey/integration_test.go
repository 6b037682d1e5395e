package mckey

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

func ours(stdout, stderr io.Writer, args []string) error {
	return Main("mckey", stdout, stderr, args)
}

// TestMain lets the test binary be mckey (cmtest.Self): a receiver that
// never gets its datagrams can then be killed.
func TestMain(m *testing.M) {
	cmtest.RunSelf(ours)
	os.Exit(m.Run())
}

func sides(t *testing.T) (cmtest.Side, cmtest.Side) {
	return cmtest.Self("ours"), cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(t, "mckey")}
}

// want is the output of a good run: the role, the group's MGID (IPv4
// mapped, as RoCE v2 makes it), and the data lines when there are
// messages.
func want(sender bool, group netip.Addr, data bool) *regexp.Regexp {
	role, xfer := "server", "receiving data transfers"
	if sender {
		role, xfer = "client", "initiating data transfers"
	}
	s := fmt.Sprintf("mckey: starting %s\nmckey: joining\nmckey: joined dgid: ::ffff:%s mlid 0x[0-9a-f]+ sl [0-9]+\n",
		role, regexp.QuoteMeta(group.String()))
	if data {
		s += xfer + "\ndata transfers complete\n"
	}
	return regexp.MustCompile("^" + s + "test complete\nreturn status 0\n$")
}

// waitMember waits until an id of dev has resolved group (the kernel's
// ids do not know user QPs): the receiver is about to join, and the
// sender's 3 s pause after its own join covers the rest.
func waitMember(dev uint32, group netip.Addr) error {
	c, err := nldev.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ids, err := c.CMIDs(dev)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id.DstAddr.Addr() == group {
				return nil
			}
		}
	}
	return fmt.Errorf("no id on %v after 20s", group)
}

// pair runs a receiver and a sender on group with the counts given, and
// returns how each ended, the receiver given limit after the sender's
// end.
func pair(t *testing.T, addr netip.Addr, dev uint32, recv, send cmtest.Side, group netip.Addr, recvC, sendC int, limit time.Duration) (r, s cmtest.Result) {
	t.Helper()
	args := []string{"-m", group.String(), "-b", addr.String(), "-S", "100"}
	waitR := recv.Start(append(args, "-C", fmt.Sprint(recvC)), limit)
	if err := waitMember(dev, group); err != nil {
		// waitR ends (kills) the receiver: nothing may outlive the test.
		t.Fatalf("%v receiver: %v\n%v", recv, err, waitR())
	}
	time.Sleep(200 * time.Millisecond)
	s = send.Start(append(args, "-s", "-C", fmt.Sprint(sendC)), 60*time.Second)()
	return waitR(), s
}

func pairs(t *testing.T) [][2]cmtest.Side {
	o, r := sides(t)
	return [][2]cmtest.Side{{o, o}, {r, o}, {o, r}}
}

// TestIntegrationMckeyJoin: a receiver and a sender join a group, print
// its MGID, pause and leave, without messages; ours against ours and
// against rdma-core's in both roles. This part does not depend on
// multicast delivery and must work on every kernel.
func TestIntegrationMckeyJoin(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	for i, p := range pairs(t) {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) {
			group := netip.AddrFrom4([4]byte{239, 1, 1, byte(20 + i)})
			r, s := pair(t, addr, dev, p[0], p[1], group, 0, 0, 30*time.Second)
			if r.Code != 0 || s.Code != 0 || !want(false, group, false).MatchString(r.Stdout) ||
				!want(true, group, false).MatchString(s.Stdout) || r.Stderr != "" || s.Stderr != "" {
				t.Fatalf("%v receiver: %v\n%v sender: %v", p[0], r, p[1], s)
			}
		})
	}
}

// TestIntegrationMckeyData: the sender sends 30 datagrams of 100 bytes,
// the receiver waits for 10 (UD may drop some); ours against ours and
// against rdma-core's in both roles. On 6.1 the receiver must get them.
// On 6.12 rxe's multicast delivery to another QP of the device fails
// about half the time whoever the peers are (rdma-core's mckey against
// itself included; see shared/ref/vm-harness.md, "Learnt later"): there
// the sender must still succeed, and the receiver must either succeed
// or still be waiting (and is then killed) — it must not fail otherwise.
func TestIntegrationMckeyData(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	flaky := strings.HasPrefix(testenv.KernelRelease(), "6.12")
	for i, p := range pairs(t) {
		t.Run(fmt.Sprintf("%v-%v", p[0], p[1]), func(t *testing.T) {
			group := netip.AddrFrom4([4]byte{239, 1, 2, byte(20 + i)})
			r, s := pair(t, addr, dev, p[0], p[1], group, 10, 30, 20*time.Second)
			if s.Code != 0 || !want(true, group, true).MatchString(s.Stdout) || s.Stderr != "" {
				t.Fatalf("%v sender: %v\n%v receiver: %v", p[1], s, p[0], r)
			}
			ok := r.Code == 0 && want(false, group, true).MatchString(r.Stdout) && r.Stderr == ""
			if !ok && !(flaky && r.Code == -1) {
				t.Fatalf("%v receiver: %v\n%v sender: %v", p[0], r, p[1], s)
			}
			if !ok {
				t.Logf("6.12: the receiver got no datagrams (the kernel's multicast flake); it was killed")
			}
		})
	}
}

// TestIntegrationMckeyErrors: bad command lines, -M without -b, and -l (rxe takes no QP create flags) end as rdma-core's
// do (output and exit status).
func TestIntegrationMckeyErrors(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	o, r := sides(t)
	for _, args := range [][]string{{"-x"}, {"-M", "ff12::1"}, {"-m", "239.1.3.1", "-b", addr.String(), "-l", "-C", "0"}} {
		rt := r.Start(args, 30*time.Second)()
		ro := o.Start(args, 30*time.Second)()
		// rdma-core's names itself by argv[0] (the full path), ours too.
		rt.Stdout = strings.ReplaceAll(rt.Stdout, r.Oracle, "mckey")
		rt.Stderr = strings.ReplaceAll(rt.Stderr, r.Oracle, "mckey")
		ro.Stdout = strings.ReplaceAll(ro.Stdout, o.Oracle, "mckey")
		ro.Stderr = strings.ReplaceAll(ro.Stderr, o.Oracle, "mckey")
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
	}
}
