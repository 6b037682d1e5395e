package cmatose

import (
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// BenchmarkUcmatoseResponsive measures testenv.Responsiveness (a 1 ms
// sleep's median and the slowest of three collections, GOMAXPROCS=1)
// while connections are set up and torn down, one run of 8 connections
// of 2 messages each way after another: by our server and client in
// this process, and, for reference, by rdma-core's pair as processes
// on the same vCPU. The bounds testenv holds idle waiters to do not
// apply: connection setup keeps the one vCPU busy, in the kernel (rxe)
// as much as in the processes. A command that held up the runtime
// would show here as ours far above the reference.
func BenchmarkUcmatoseResponsive(b *testing.B) {
	addr, dev := cmtest.RxeAddr(b)
	o, r := cmtest.Side{Name: "ours", Main: ours}, cmtest.Side{Name: "rdma-core", Oracle: testenv.Oracle(b, "ucmatose")}
	for range b.N {
		for _, s := range []cmtest.Side{r, o} {
			sleep, gc, runs := responsiveDuring(b, addr, dev, s)
			b.ReportMetric(float64(sleep.Microseconds())/1000, "sleep-ms-"+s.Name)
			b.ReportMetric(float64(gc.Microseconds())/1000, "gc-ms-"+s.Name)
			b.ReportMetric(float64(runs), "runs-"+s.Name)
		}
	}
}

// responsiveDuring measures Responsiveness (the best of three) while
// runs of side against itself go on.
func responsiveDuring(b *testing.B, addr netip.Addr, dev uint32, side cmtest.Side) (sleep, gc time.Duration, runs int) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// Not run: b.Fatalf belongs to the benchmark's goroutine.
			port := cmtest.Port()
			p := []string{"-p", strconv.Itoa(int(port)), "-c", "8", "-C", "2", "-S", "100"}
			waitS := side.Start(append([]string{"-b", addr.String()}, p...), 120*time.Second)
			if err := cmtest.WaitListen(dev, netip.AddrPortFrom(addr, port), 20*time.Second); err != nil {
				b.Errorf("%v server: %v\n%v", side, err, waitS())
				return
			}
			rc := side.Start(append([]string{"-s", addr.String()}, p...), 120*time.Second)()
			rs := waitS()
			if rc.Code != 0 || rs.Code != 0 || rs.Stdout != serverOut || rc.Stdout != clientOut {
				b.Errorf("%v server: %v\nclient: %v", side, rs, rc)
				return
			}
			runs++
		}
	}()
	sleep, gc = time.Hour, time.Hour
	for range 3 {
		s, g := testenv.Responsiveness(b, func() {})
		sleep, gc = min(sleep, s), min(gc, g)
	}
	stop.Store(true)
	wg.Wait()
	return sleep, gc, runs
}
