package main

import (
	"os"
	"testing"
)

// TestMain lets a test run this test binary as the rdma command itself
// (RDMASTACK_AS_RDMA=1), e.g. under setpriv with fewer capabilities.
func TestMain(m *testing.M) {
	if os.Getenv("RDMASTACK_AS_RDMA") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
