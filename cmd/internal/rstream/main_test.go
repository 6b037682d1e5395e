package rstream

import (
	"io"
	"os"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// TestMain lets the test binary be our rstream as a process
// (cmtest.Self), for the peer namespace of the siw guest, or, with
// setupArg first, BenchmarkRsocketSetup's loop.
func TestMain(m *testing.M) {
	cmtest.RunSelf(func(stdout, stderr io.Writer, args []string) error {
		if len(args) > 0 && args[0] == setupArg {
			return setupLoop(stdout, args[1:])
		}
		return run("rstream", stdout, stderr, args, rsock.RDMA, rsock.SizeToCount)
	})
	os.Exit(m.Run())
}
