package uverbs_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
)

// BenchmarkMessageRate is the message rate of PostSend/PostRecv/Poll:
// RC sends of 64 bytes (inline) between two QPs of one device, 16 in
// flight, each with its own doorbell, completions reaped by polling
// (yielding the CPU to the kernel's rxe work when a poll finds nothing).
// It is what the provider-neutral data path is compared with the rxe
// package it replaced (README).
func BenchmarkMessageRate(b *testing.B) {
	e := newEnv(b)
	a, r, ca, cr := e.pair(b, qpOpts{send: 64, recv: 64, inline: 64})
	const window = 16
	var wc [window]uverbs.WC
	src, dst := e.sge(0, 64), e.sge(4096, 64)
	reap := func(q *cq, n int) {
		for n > 0 {
			k, err := q.Poll(wc[:min(n, window)])
			if err != nil {
				b.Fatal(err)
			}
			for _, w := range wc[:k] {
				if w.Status != uverbs.WCSuccess {
					b.Fatalf("completion %+v", w)
				}
			}
			if n -= k; k == 0 {
				unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += window {
		n := min(window, b.N-i)
		for j := range n {
			rsge := [1]uverbs.SGE{dst}
			if err := r.PostRecv(&uverbs.RecvWR{ID: uint64(j), SGE: rsge[:]}); err != nil {
				b.Fatal(err)
			}
			ssge := [1]uverbs.SGE{src}
			if err := a.PostSend(&uverbs.SendWR{ID: uint64(j), Opcode: uverbs.OpSend,
				Flags: uverbs.SendSignaled | uverbs.SendInline, SGE: ssge[:]}); err != nil {
				b.Fatal(err)
			}
		}
		reap(ca, n)
		reap(cr, n)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}
