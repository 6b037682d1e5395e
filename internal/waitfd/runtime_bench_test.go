package waitfd

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// BenchmarkReadRuntime measures what read's raw read(2) costs the rest of
// the process: 8 pairs of goroutines ping-pong through eventfds (each
// waits in FD.Read, so reads both find data and find none and park in the
// netpoller) while the benchmark's goroutine times runtime.GC() (b.N
// collections). The sub-benchmarks are the raw call (what the package
// does) and the call through the scheduler's system-call path, side by
// side; run with -test.count=N for alternating rounds. Metrics: gc-ms,
// the mean collection; gc-max-ms, the slowest; rounds/s, the ping-pongs
// meanwhile. A raw call that could sleep would hold its P through a
// collection's stop-the-world and show as gc-max-ms.
func BenchmarkReadRuntime(b *testing.B) {
	for _, mode := range []struct {
		name string
		call func(trap, a1, a2, a3 uintptr) (uintptr, uintptr, unix.Errno)
	}{{"raw", unix.RawSyscall}, {"syscall", unix.Syscall}} {
		b.Run(mode.name, func(b *testing.B) {
			old := readSyscall
			readSyscall = mode.call
			b.Cleanup(func() { readSyscall = old })
			benchReadRuntime(b)
		})
	}
}

// pingFD is an FD over an eventfd and a second descriptor that signals it.
func pingFD(b *testing.B) (*FD, int) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	sig, err := unix.Dup(efd)
	if err != nil {
		b.Fatal(err)
	}
	fd, err := New(efd, "bench-eventfd")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fd.Close(); unix.Close(sig) })
	return fd, sig
}

func benchReadRuntime(b *testing.B) {
	const pairs = 8
	ctx, cancel := context.WithCancel(context.Background())
	var rounds atomic.Int64
	var wg sync.WaitGroup
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	for i := 0; i < pairs; i++ {
		fa, sa := pingFD(b)
		fb, sb := pingFD(b)
		wg.Add(2)
		go func() { // pings b, waits for a
			defer wg.Done()
			buf := make([]byte, 8)
			for ctx.Err() == nil {
				unix.Write(sb, one)
				if _, err := fa.Read(ctx, buf); err != nil {
					return
				}
				rounds.Add(1)
			}
		}()
		go func() { // waits for b, pings a
			defer wg.Done()
			buf := make([]byte, 8)
			for ctx.Err() == nil {
				if _, err := fb.Read(ctx, buf); err != nil {
					return
				}
				unix.Write(sa, one)
			}
		}()
	}
	for rounds.Load() < 1000 {
		time.Sleep(time.Millisecond)
	}
	start, startRounds := time.Now(), rounds.Load()
	testenv.TimeCollections(b)
	elapsed, n := time.Since(start), rounds.Load()-startRounds
	cancel()
	wg.Wait()
	if n == 0 {
		b.Fatal("no ping-pong while the collections ran")
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "rounds/s")
}
