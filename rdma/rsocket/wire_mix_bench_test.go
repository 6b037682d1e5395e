package rsocket

import (
	"fmt"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// BenchmarkWireRsocketMix: one stream carries b.N MiB each way at once
// (-test.benchtime 256x for the 256 MiB the wire issue asks for), with
// SHA-256 checked at both ends as in TestWireRsocketNetem: on the clean
// wire, then under testenv.WireFaults (the mix) with the default ACK
// timeout and with two smaller ones a user can set (Dialer.AckTimeout,
// ListenConfig.AckTimeout). Each ACK timeout is rounded up to the QP's
// 4.096 µs × 2^n, and the failure bound is a minute, so that only the
// data decides. MB/s is each way's; of-clean is the fraction of the
// clean wire's.
func BenchmarkWireRsocketMix(b *testing.B) {
	w, _ := rxetest.Wire(b)
	var clean float64
	for _, c := range []struct {
		name  string
		netem bool
		ack   time.Duration
	}{
		{"clean", false, 0},
		{"mix-537ms", true, 0},
		{"mix-67ms", true, ackTimeoutUnit << 14},
		{"mix-17ms", true, ackTimeoutUnit << 12},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.netem {
				w.Netem(b, testenv.WireFaults)
			}
			conn := wireConn(b, w, fmt.Sprint("conn", b.N),
				&ListenConfig{AckTimeout: c.ack, FailureBound: time.Minute},
				&Dialer{AckTimeout: c.ack, FailureBound: time.Minute})
			conn.SetDeadline(time.Time{})
			w.Sync(b, fmt.Sprint(b.Name(), "/go", b.N))
			size := int64(b.N) << 20
			b.SetBytes(1 << 20) // an op is a MiB each way: MB/s is each way's
			b.ResetTimer()
			took := twoWay(b, w, conn, size)
			b.StopTimer()
			rate := float64(size) / took.Seconds()
			if !c.netem {
				clean = rate
			} else if clean > 0 {
				b.ReportMetric(rate/clean, "of-clean")
			}
		})
	}
}
