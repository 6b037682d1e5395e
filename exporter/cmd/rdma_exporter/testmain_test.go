package main

import (
	"os"
	"testing"
)

// TestMain lets a test run this test binary as rdma_exporter itself
// (RDMA_EXPORTER_AS_MAIN=1), e.g. under setpriv as an unprivileged user.
func TestMain(m *testing.M) {
	if os.Getenv("RDMA_EXPORTER_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
