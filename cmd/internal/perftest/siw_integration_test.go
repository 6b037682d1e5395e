package perftest

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testenv"
)

// TestMain lets the test binary be ours as a process (cmtest.Self): its
// first argument names the program.
func TestMain(m *testing.M) {
	cmtest.RunSelf(func(stdout, stderr io.Writer, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("no program named")
		}
		return Command(args[0], stdout, stderr, args)
	})
	os.Exit(m.Run())
}

// TestIntegrationSIWPerftest: on Soft-iWARP, perftest's RC programs over
// rdma_cm (-R, the only way an iWARP QP reaches RTS) against perftest's
// in both roles: the server on siw0, the client on siw1 in the peer
// namespace (ours there as a process), each side's table checked.
func TestIntegrationSIWPerftest(t *testing.T) {
	e, dev := cmtest.SIW(t)
	for _, tc := range []struct {
		prog string
		size int
	}{
		{"ib_send_bw", 65536}, {"ib_write_bw", 65536}, {"ib_read_bw", 65536},
		{"ib_send_lat", 2}, {"ib_write_lat", 2}, {"ib_read_lat", 2},
	} {
		theirs := cmtest.Side{Name: "perftest", Oracle: testenv.Oracle(t, tc.prog)}
		ours := end{prog: tc.prog}.side(t)
		oursPeer := cmtest.Self("ours").InNetns(e.PeerNetns)
		for _, roles := range [][2]cmtest.Side{{ours, theirs.InNetns(e.PeerNetns)}, {theirs, oursPeer}} {
			t.Run(fmt.Sprintf("%s/server=%v", tc.prog, roles[0]), func(t *testing.T) {
				cmtest.NoCMIDsLeft(t, dev)
				cmtest.NoQPsLeft(t, dev)
				const iters = 20
				port := int(nextPort.Add(1))
				common := []string{"-n", strconv.Itoa(iters), "-R", "-F", "-p", strconv.Itoa(port)}
				server, client := roles[0], roles[1]
				sArgs := append([]string{"-d", e.Dev}, common...)
				cArgs := append(append([]string{"-d", e.PeerDev}, common...), e.Addr.String())
				if client.Main == nil && client.Oracle != theirs.Oracle {
					cArgs = append([]string{tc.prog}, cArgs...) // ours as a process: the program first
				}
				ws := server.Start(sArgs, 150e9)
				testenv.WaitFor(t, "the server to listen", func() bool { return cmListening(t, dev, port) })
				rc := client.Start(cArgs, 150e9)()
				rs := ws()
				if rs.Code != 0 || rc.Code != 0 {
					t.Fatalf("server %v: %v\nclient %v: %v", server, rs, client, rc)
				}
				checkOutputs(t, tc.prog, true, tc.size, iters, rs.Stdout, rc.Stdout)
			})
		}
	}
}
