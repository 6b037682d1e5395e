package cmatose

import (
	"strconv"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkUcmatose times whole runs of 50 connections with ucmatose's
// default 10 messages of 100 bytes each way: our server and client
// against rdma-core's pair, and each of ours with rdma-core's other side,
// as processes copied to tmpfs, in 8 ABBA rounds after a warm-up (see
// BenchmarkRping for the command). It also reports each pair's context
// switches per connection and CPU time per run (medians, from rusage).
func BenchmarkUcmatose(b *testing.B) {
	const conns = 50
	addr, dev := cmtest.RxeAddr(b)
	ours, theirs := cmtest.Binaries(b, "ucmatose")
	for range b.N {
		cmtest.BindConnect{Dev: dev, Addr: addr, Args: []string{"-c", strconv.Itoa(conns)}, Per: conns, Unit: "conn"}.Run(b, ours, theirs)
	}
}
