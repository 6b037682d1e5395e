package pingpong

import (
	"os"
	"os/exec"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// BenchmarkPingpong measures the round trip of ours against rdma-core's
// pingpong on rxe0 in the same run, 64-byte messages: one pair of ours,
// one pair of rdma-core's, each b.N iterations. It reports both
// latencies, the message rates (one message each way per round trip) and
// ours/rdma-core. Event mode (-e) by default; busy polling in the "poll"
// variants, which under TCG waits for timer ticks. With PP_MIXED set it
// also times ours against rdma-core's in both roles. Run it in the VM:
//
//	go test -c -o pp.test ./internal/pingpong
//	go run ./test/vm run -- $PWD/pp.test -test.run XXX -test.bench Pingpong -test.benchtime 2000x
func BenchmarkPingpong(b *testing.B) {
	testenv.RequireRDMA(b)
	for _, mode := range []struct {
		name  string
		extra []string
	}{{"rc-event", []string{"-e"}}, {"ud-event", []string{"-e"}}, {"rc-poll", nil}} {
		b.Run(mode.name, func(b *testing.B) {
			kind := RC
			if mode.name[:2] == "ud" {
				kind = UD
			}
			_, theirs := oracles(b, kind)
			// Our command as its own process, as rdma-core's runs: the
			// VM puts our cmd/ binaries first on PATH.
			path, err := exec.LookPath(map[Kind]string{RC: "ibv_rc_pingpong", UD: "ibv_ud_pingpong"}[kind])
			if err != nil || path == theirs.oracle {
				b.Fatalf("our binary: %q, %v (rdma-core's is %s)", path, err, theirs.oracle)
			}
			ours := side{oracle: path, bin: true, kind: kind}
			iters := max(b.N, 20)
			if mode.extra == nil {
				iters = min(iters, 300) // about 8 ms a round trip
			}
			_, oc := pingpong(b, ours, ours, 64, iters, mode.extra...)
			_, tc := pingpong(b, theirs, theirs, 64, iters, mode.extra...)
			b.ReportMetric(oc.usecPerIter, "us/rt-ours")
			b.ReportMetric(tc.usecPerIter, "us/rt-rdmacore")
			b.ReportMetric(2e6/oc.usecPerIter, "msg/s-ours")
			b.ReportMetric(2e6/tc.usecPerIter, "msg/s-rdmacore")
			b.ReportMetric(oc.usecPerIter/tc.usecPerIter, "ratio-ours/rdmacore")
			if os.Getenv("PP_MIXED") != "" {
				_, m1 := pingpong(b, ours, theirs, 64, iters, mode.extra...)
				_, m2 := pingpong(b, theirs, ours, 64, iters, mode.extra...)
				b.ReportMetric(m1.usecPerIter, "us/rt-ours-srv")
				b.ReportMetric(m2.usecPerIter, "us/rt-ours-cli")
			}
		})
	}
}
