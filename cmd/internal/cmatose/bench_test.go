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
// BenchmarkRping for the command).
func BenchmarkUcmatose(b *testing.B) {
	addr, dev := cmtest.RxeAddr(b)
	ours, theirs := cmtest.Binaries(b, "ucmatose")
	for range b.N {
		cmtest.ABBA(b, 8, ours, theirs, func(s, c cmtest.Side) time.Duration {
			port := cmtest.Port()
			p := []string{"-p", strconv.Itoa(int(port)), "-c", "50"}
			return cmtest.Timed(b, dev, netip.AddrPortFrom(addr, port), s, c,
				append([]string{"-b", addr.String()}, p...), append([]string{"-s", addr.String()}, p...))
		})
	}
}
