package uverbs_test

import (
	"errors"
	"math"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// BenchmarkDoorbellRuntime measures what the doorbell's system call costs
// the rest of the process: one goroutine streams 256 KiB RDMA WRITEs
// between two RC QPs of one device, busy-polling its CQ, while the
// benchmark's goroutine times runtime.GC() (b.N collections). The
// sub-benchmarks are the doorbell through the scheduler's system-call
// path (what the package does) and a raw system call (what it did until
// December 2026), side by side in one binary; run with -test.count=N for
// alternating rounds. Metrics: gc-ms, the mean collection; gc-max-ms, the
// slowest; stop-max-ms, the longest stop-the-world wait for the
// collections (/sched/pauses/stopping/gc:seconds, the upper bound of its
// highest bucket that grew); MB/s, the stream's throughput meanwhile.
// Meant for 2 vCPUs with GOMAXPROCS=2 (see the README).
func BenchmarkDoorbellRuntime(b *testing.B) {
	for _, mode := range []struct {
		name string
		raw  bool
	}{{"syscall", false}, {"raw", true}} {
		b.Run(mode.name, func(b *testing.B) {
			b.Cleanup(uverbs.SetRawDoorbell(mode.raw))
			benchDoorbellRuntime(b)
		})
	}
}

const streamChunk = 256 << 10

func benchDoorbellRuntime(b *testing.B) {
	e := newEnv(b)
	a, _, ca, _ := e.pair(b, qpOpts{send: 16, recv: 16})
	remote := e.buf.Addr(512 << 10)
	var moved atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- streamWrites(a, ca, e, remote, stop, &moved) }()
	finish := sync.OnceValue(func() error {
		close(stop)
		return <-done
	})
	b.Cleanup(func() { finish() })

	// Let the stream reach its pace before the collections are timed.
	for moved.Load() < 4*streamChunk {
		select {
		case err := <-done:
			b.Fatalf("stream ended early: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	before := stoppingHistogram()
	start, startBytes := time.Now(), moved.Load()
	testenv.TimeCollections(b)
	elapsed, bytes := time.Since(start), moved.Load()-startBytes
	if err := finish(); err != nil {
		b.Fatal(err)
	}
	if bytes == 0 {
		b.Fatal("the stream moved nothing while the collections ran")
	}
	b.ReportMetric(worstGrownBucket(before, stoppingHistogram())*1e3, "stop-max-ms")
	b.ReportMetric(float64(bytes)/elapsed.Seconds()/1e6, "MB/s")
}

// streamWrites posts signaled 256 KiB RDMA WRITEs from the start of the
// env's buffer to remote, two in flight, busy-polling cq, until stop is
// closed; then it waits for the outstanding ones.
func streamWrites(qp *uverbs.QP, cq *cq, e *env, remote uint64, stop <-chan struct{}, moved *atomic.Int64) error {
	var wc [4]uverbs.WC
	inflight := 0
	for {
		stopping := false
		select {
		case <-stop:
			stopping = true
		default:
		}
		for !stopping && inflight < 2 {
			sge := [1]uverbs.SGE{e.sge(0, streamChunk)}
			if err := qp.PostSend(&uverbs.SendWR{Opcode: uverbs.OpRDMAWrite, Flags: uverbs.SendSignaled,
				SGE: sge[:], RemoteAddr: remote, RKey: e.mr.RKey()}); err != nil {
				return err
			}
			inflight++
		}
		if inflight == 0 {
			return nil
		}
		n, err := cq.Poll(wc[:])
		if err != nil {
			return err
		}
		for _, w := range wc[:n] {
			if w.Status != uverbs.WCSuccess {
				return errors.New("write completed with " + w.Status.String())
			}
			moved.Add(streamChunk)
		}
		inflight -= n
	}
}

func stoppingHistogram() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/pauses/stopping/gc:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// worstGrownBucket is the upper bound, in seconds, of the highest bucket
// whose count grew from before to after (the lower bound when the upper
// is +Inf); 0 when none did.
func worstGrownBucket(before, after *metrics.Float64Histogram) float64 {
	for i := len(after.Counts) - 1; i >= 0; i-- {
		if after.Counts[i] > before.Counts[i] {
			if hi := after.Buckets[i+1]; !math.IsInf(hi, 1) {
				return hi
			}
			return after.Buckets[i]
		}
	}
	return 0
}
