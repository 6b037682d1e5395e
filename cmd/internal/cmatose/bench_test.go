package cmatose

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

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
		use := cmtest.NewUsageMetrics(ours, theirs)
		cmtest.ABBA(b, 8, ours, theirs, func(s, c cmtest.Side) time.Duration {
			port := cmtest.Port()
			p := []string{"-p", strconv.Itoa(int(port)), "-c", strconv.Itoa(conns)}
			d, su, cu := cmtest.TimedUsage(b, dev, netip.AddrPortFrom(addr, port), s, c,
				append([]string{"-b", addr.String()}, p...), append([]string{"-s", addr.String()}, p...))
			use.Add(s, c, su, cu)
			return d
		})
		use.Report(b, conns, "conn")
	}
}
