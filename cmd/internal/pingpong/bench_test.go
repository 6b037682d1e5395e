package pingpong

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// BenchmarkPingpong measures the round trip of ours against rdma-core's
// pingpong on rxe0 in the same run, 64-byte messages. Each benchmark
// iteration is one round trip of each program; the iterations are split
// into rounds (PP_ROUNDS, default 6) that alternate ours and rdma-core's
// in ABBA order, so that the drift of a single-vCPU guest over a run
// (later runs are slower) falls on both alike. It reports both median
// latencies, the message rates (one message each way per round trip),
// the ratio of the medians, and the median of each round's ratio (the
// two runs of a round are adjacent in time, so that ratio also cancels
// slower drift and changes in the host's load). Event mode (-e) by default; busy polling in
// the "poll" variant, which under TCG with one vCPU waits for the other
// process's time slice. Both programs' binaries are copied to the
// temporary directory (the guest's tmpfs) first. The "srq" variant runs srq_pingpong's default 16
// QPs, whose iterations count message pairs over all of them (16 in
// flight at once), so its "round trip" is the time per pair. With
// PP_MIXED set it also times ours against rdma-core's in both roles. Run
// it in the VM:
//
//	go test -c -o out/pp.test ./cmd/internal/pingpong
//	go run ./test/vm run -devices 1 -- env PP_ROUNDS=16 $PWD/out/pp.test -test.run XXX -test.bench Pingpong -test.benchtime 32000x
func BenchmarkPingpong(b *testing.B) {
	testenv.RequireRDMA(b)
	rounds := 6
	if s := os.Getenv("PP_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 || n%2 != 0 {
			b.Fatalf("PP_ROUNDS=%q: want an even number of at least 2", s)
		}
		rounds = n
	}
	for _, mode := range []struct {
		name  string
		kind  Kind
		extra []string
	}{
		{"rc-event", RC, []string{"-e"}}, {"ud-event", UD, []string{"-e"}}, {"uc-event", UC, []string{"-e"}},
		{"srq-event", SRQ, []string{"-e"}}, {"rc-poll", RC, nil},
	} {
		b.Run(mode.name, func(b *testing.B) {
			kind := mode.kind
			_, theirs := oracles(b, kind)
			// Our command as its own process, as rdma-core's runs: the
			// VM puts our cmd/ binaries first on PATH.
			path, err := exec.LookPath(progs[kind])
			if err != nil || path == theirs.oracle {
				b.Fatalf("our binary: %q, %v (rdma-core's is %s)", path, err, theirs.oracle)
			}
			// Both binaries run from the guest's tmpfs: from the 9p root
			// every page of them is demand-paged over 9p.
			theirs.oracle = copyExe(b, theirs.oracle, "rdma-core")
			ours := side{oracle: copyExe(b, path, "ours"), bin: true, kind: kind}
			iters := max(b.N/rounds, 20)
			if mode.extra == nil {
				iters = min(iters, 100) // milliseconds a round trip
			}
			var oursUS, theirsUS, paired []float64
			for r := range rounds {
				order := []side{ours, theirs}
				if r%4 == 1 || r%4 == 2 { // ABBA
					order = []side{theirs, ours}
				}
				for _, s := range order {
					_, c := pingpong(b, s, s, 64, iters, mode.extra...)
					if s.oracle == ours.oracle {
						oursUS = append(oursUS, c.usecPerIter)
					} else {
						theirsUS = append(theirsUS, c.usecPerIter)
					}
				}
				paired = append(paired, oursUS[r]/theirsUS[r])
			}
			o, t := median(oursUS), median(theirsUS)
			b.ReportMetric(o, "us/rt-ours")
			b.ReportMetric(t, "us/rt-rdmacore")
			b.ReportMetric(2e6/o, "msg/s-ours")
			b.ReportMetric(2e6/t, "msg/s-rdmacore")
			b.ReportMetric(o/t, "ratio-ours/rdmacore")
			b.ReportMetric(median(paired), "ratio-paired")
			if os.Getenv("PP_MIXED") != "" {
				_, m1 := pingpong(b, ours, theirs, 64, iters, mode.extra...)
				_, m2 := pingpong(b, theirs, ours, 64, iters, mode.extra...)
				b.ReportMetric(m1.usecPerIter, "us/rt-ours-srv")
				b.ReportMetric(m2.usecPerIter, "us/rt-ours-cli")
			}
		})
	}
}

// copyExe copies the executable at path into a directory of the test's
// temporary one (tmpfs in the VM) named dir, and returns the copy's path.
func copyExe(b *testing.B, path, dir string) string {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	d := filepath.Join(b.TempDir(), dir)
	if err := os.Mkdir(d, 0o755); err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(d, filepath.Base(path))
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return dst
}

// median of a non-empty sample.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
