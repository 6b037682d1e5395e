package main

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// TestIntegrationUsage: an unknown option gives rdma-core's usage text
// and exit status (the pingpongs themselves are tested in
// internal/pingpong).
func TestIntegrationUsage(t *testing.T) {
	testenv.RequireRDMA(t)
	oracle := testenv.Oracle(t, "ibv_rc_pingpong")
	var want bytes.Buffer
	cmd := exec.Command(oracle, "-h")
	cmd.Stdout = &want
	if err := cmd.Run(); err == nil {
		t.Fatal("rdma-core's -h exited 0")
	}
	var got bytes.Buffer
	err := run(&got, []string{"-h"})
	if err == nil || err.Error() != "ibv_rc_pingpong: invalid option -- 'h'" {
		t.Fatalf("run -h: %v", err)
	}
	// rdma-core names itself by argv[0], the full path.
	exp := bytes.ReplaceAll(want.Bytes(), []byte(oracle), []byte("ibv_rc_pingpong"))
	if !bytes.Equal(got.Bytes(), exp) {
		t.Fatalf("usage differs:\nours:\n%s\nrdma-core:\n%s", got.Bytes(), exp)
	}
}
