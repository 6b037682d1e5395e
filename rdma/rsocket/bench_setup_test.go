package rsocket

import (
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// BenchmarkDialAccept is connection setup and teardown in one process:
// a Dial, its Accept and both Closes on rxe0 (ns/op is one connection).
// It also reports connections a second and, from getrusage, the
// process's context switches and CPU time per connection: the figures
// that set it beside rdma-core's rsockets (cmd/internal/rstream's
// BenchmarkRstreamSetup times rstream's processes, which connect once).
//
//	go run ./test/vm test -unit=false -race none -wire=false -scale '' -devices 2 -- -test.run XXX -test.bench DialAccept -test.benchtime 50x
func BenchmarkDialAccept(b *testing.B) {
	l, _ := rsListen(b)
	usage := func() (int64, time.Duration) {
		sw, cpu, err := testenv.SelfUsage()
		if err != nil {
			b.Fatal(err)
		}
		return sw, cpu
	}
	b.ReportAllocs()
	b.ResetTimer()
	sw0, cpu0 := usage()
	for range b.N {
		cli, srv, err := rsPairErr(l, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := cli.Close(); err != nil {
			b.Fatal(err)
		}
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
	sw1, cpu1 := usage()
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "conns/s")
	b.ReportMetric(float64(sw1-sw0)/n, "csw/conn")
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/n, "cpums/conn")
}
