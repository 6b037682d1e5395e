package cmatose

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// syscallMargin is how many system calls per connection the library may
// make beyond all of rdma-core's, in each role. What it covers: ours
// waits for completions on a completion channel (one per process, made
// once) where rdma-core's ucmatose busy-polls its CQs, so each CQ is
// armed with a REQ_NOTIFY_CQ write when it is made and after each event,
// and each event is a read(2) the C program does not make: about 4
// writes and 2.5 reads a connection, measured on both kernels
// (docs/benchmarks.md), their number following the timing. That is the
// runtime's rule that a blocking wait goes through the netpoller, not a
// spinning thread. rdma-core's start-up calls (openat, close, newfstatat
// of sysfs) outnumber ours, which leaves the measured totals level.
const syscallMargin = 6

// TestIntegrationUcmatoseSyscalls counts, under strace -f, the system
// calls of ucmatose -c 20 (10 messages of 100 bytes each way a
// connection), ours (the command, as a process with its spare P) against
// ours and rdma-core's against rdma-core's, server and client, and
// asserts that per connection the library's calls (the total less the Go
// runtime's own: testenv.RuntimeSyscalls and the runtime's mappings, see
// testenv.ParseStrace) are at most rdma-core's total plus
// syscallMargin. Both tables are logged.
//
// The programs are the separately built commands, so the race
// detector's run counts the same as the others (inside the VM a skip is
// a failure).
func TestIntegrationUcmatoseSyscalls(t *testing.T) {
	const conns = 20
	addr, dev := cmtest.RxeAddr(t)
	cmtest.NoCMIDsLeft(t, dev)
	cmtest.NoQPsLeft(t, dev)
	ours, theirs := cmtest.Binaries(t, "ucmatose")
	dir := t.TempDir()
	got := map[string]testenv.Syscalls{}
	for _, who := range []cmtest.Side{ours, theirs} {
		s, sl := cmtest.Straced(t, dir, who.Name+"-server", who)
		c, cl := cmtest.Straced(t, dir, who.Name+"-client", who)
		port := cmtest.Port()
		p := []string{"-p", strconv.Itoa(int(port)), "-c", strconv.Itoa(conns)}
		_, su, cu := cmtest.TimedUsage(t, dev, netip.AddrPortFrom(addr, port), s, c,
			append([]string{"-b", addr.String()}, p...), append([]string{"-s", addr.String()}, p...))
		got[who.Name+"-server"] = cmtest.StraceCounts(t, sl)
		got[who.Name+"-client"] = cmtest.StraceCounts(t, cl)
		t.Logf("%v: context switches server %d, client %d", who, su.Switches(), cu.Switches())
	}
	for _, role := range []string{"server", "client"} {
		o, c := got[ours.Name+"-"+role], got[theirs.Name+"-"+role]
		per := func(n int) float64 { return float64(n) / conns }
		t.Logf("%s per connection: ours library %.1f, runtime %.1f; rdma-core %.1f (runtime-class %.1f)\n ours: %v\n rdma-core: %v",
			role, per(o.Library), per(o.RuntimeTotal()), per(c.Total), per(c.RuntimeTotal()), o, c)
		if c.Total < conns*20 {
			t.Errorf("%s: rdma-core's ucmatose made %d calls for %d connections: is the log read right?", role, c.Total, conns)
		}
		if o.Library > c.Total+syscallMargin*conns {
			t.Errorf("%s: the library made %.1f system calls a connection, rdma-core %.1f (margin %d)",
				role, per(o.Library), per(c.Total), syscallMargin)
		}
	}
}
