package rcopy

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// sides are our rcopy (over nw, in-process) and rdma-core's.
func sides(t testing.TB, nw rsock.Network) (ours, theirs cmtest.Side) {
	return cmtest.Side{Name: "ours", Main: func(stdout, stderr io.Writer, args []string) error {
			return Run(context.Background(), nw, "rcopy", stdout, stderr, args)
		}},
		cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(t, "rcopy")}
}

// differ runs each command line with ours and rdma-core's rcopy and
// fails t where the output or the exit status differ.
func differ(t *testing.T, ours, theirs cmtest.Side, cases [][]string) {
	t.Helper()
	for _, args := range cases {
		rt := theirs.Start(args, 30*time.Second)()
		ro := ours.Start(args, 30*time.Second)()
		// rdma-core's names itself by argv[0], the full path.
		rt.Stdout = strings.ReplaceAll(rt.Stdout, theirs.Oracle, "rcopy")
		rt.Stderr = strings.ReplaceAll(rt.Stderr, theirs.Oracle, "rcopy")
		if rt.Code != ro.Code || rt.Stdout != ro.Stdout || rt.Stderr != ro.Stderr {
			t.Errorf("%q: ours %v\nrdma-core's %v", args, ro, rt)
		}
	}
}

// TestIntegrationRcopyUsage: command lines that end before any
// connection end as rdma-core's rcopy's do.
func TestIntegrationRcopyUsage(t *testing.T) {
	o, r := sides(t, rsock.TCP)
	differ(t, o, r, [][]string{{"file"}, {"file", "host", "-x"}, {"-p"}, {"-q", "1"}})
}
