package cmtest

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// SIW is rxetest.SIW: the test's siw guest and the index of its device
// in the root namespace, where servers listen; clients run in the peer
// namespace (Side.InNetns) and dial SIWEnv.Addr.
func SIW(t testing.TB) (*testenv.SIWEnv, uint32) {
	t.Helper()
	return rxetest.SIW(t)
}

// siwServerGrace is how long SIWFailAlike's server may run on after its
// client ended: several times what a failing program takes to notice on
// a loaded host.
const siwServerGrace = 8 * time.Second

// SIWFailAlike runs a program that cannot work on iWARP twice on the siw
// guest, rdma-core's pair and then ours (the command of that name first
// on the guest's PATH), each with its server on siw0 (serverArgs) and its
// client in the peer namespace (clientArgs), and fails t unless ours ends
// in each role as rdma-core's does: the same exit status and the same
// standard output and error once mask has replaced what differs from run
// to run (nil: nothing). A client still running after limit, or a server
// still running siwServerGrace after its client ended (it waits for a
// request that will not come), is killed and counts as exit status -1;
// where both are, their output is not compared (C's buffered standard
// output dies with it).
func SIWFailAlike(t *testing.T, e *testenv.SIWEnv, name string, serverArgs, clientArgs []string, limit time.Duration, mask func(string) string) {
	t.Helper()
	theirs := Side{Name: "rdma-core", Oracle: testenv.Oracle(t, name)}
	bin, err := exec.LookPath(name)
	if err != nil || bin == theirs.Oracle {
		t.Fatalf("our %s: %q, %v", name, bin, err)
	}
	ours := Side{Name: "ours", Oracle: bin}
	// Each names itself by argv[0], its full path.
	names := strings.NewReplacer(theirs.Oracle, name, bin, name)
	if mask == nil {
		mask = func(s string) string { return s }
	}
	norm := func(s string) string { return mask(names.Replace(s)) }
	run := func(s Side) (rs, rc Result) {
		ws := s.Start(serverArgs, siwServerGrace) // counted from ws()
		time.Sleep(300 * time.Millisecond)        // the server's listen, or its early end
		rc = s.InNetns(e.PeerNetns).Start(clientArgs, limit)()
		return ws(), rc
	}
	ts, tc := run(theirs)
	if ts.Code == 0 && tc.Code == 0 {
		t.Fatalf("rdma-core's %s worked on siw:\nserver %v\nclient %v", name, ts, tc)
	}
	ous, ouc := run(ours)
	for _, c := range []struct {
		role         string
		theirs, ours Result
	}{{"server", ts, ous}, {"client", tc, ouc}} {
		if c.theirs.Code == -1 && c.ours.Code == -1 {
			continue // both waited until killed: rdma-core's unflushed stdout is lost
		}
		if c.ours.Code != c.theirs.Code || norm(c.ours.Stdout) != norm(c.theirs.Stdout) || norm(c.ours.Stderr) != norm(c.theirs.Stderr) {
			t.Errorf("%s %s on siw: ours %v\nrdma-core's %v", name, c.role, c.ours, c.theirs)
		}
	}
}
