package pingpong

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationUsage: an unknown option gives rdma-core's usage text and
// a failure, for each program.
func TestIntegrationUsage(t *testing.T) {
	testenv.RequireRDMA(t)
	for _, prog := range []struct {
		name string
		mode Kind
	}{{"ibv_rc_pingpong", RC}, {"ibv_ud_pingpong", UD}, {"ibv_uc_pingpong", UC}, {"ibv_srq_pingpong", SRQ}} {
		oracle := testenv.Oracle(t, prog.name)
		var want bytes.Buffer
		cmd := exec.Command(oracle, "-h")
		cmd.Stdout = &want
		if err := cmd.Run(); err == nil {
			t.Fatalf("rdma-core's %s -h exited 0", prog.name)
		}
		var got bytes.Buffer
		err := Main(&got, prog.name, prog.mode, []string{"-h"})
		if err == nil || err.Error() != prog.name+": invalid option -- 'h'" {
			t.Fatalf("%s -h: %v", prog.name, err)
		}
		// rdma-core names itself by argv[0], the full path.
		exp := bytes.ReplaceAll(want.Bytes(), []byte(oracle), []byte(prog.name))
		if !bytes.Equal(got.Bytes(), exp) {
			t.Fatalf("%s usage differs:\nours:\n%s\nrdma-core:\n%s", prog.name, got.Bytes(), exp)
		}
	}
}
