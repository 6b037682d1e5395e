package pingpong

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
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
// slower drift and changes in the host's load). Event mode (-e) by
// default; busy polling in the "poll" variant, which under TCG with one
// vCPU waits for the other process's time slice. The "srq" variant runs
// srq_pingpong's default 16 QPs, whose iterations count message pairs
// over all of them (16 in flight at once), so its "round trip" is the
// time per pair. In event mode a third program joins each round (A B C,
// then C B A): ours with its completion channel polling before it parks
// ("ourspoll": uverbs' CompChannel.SetPollTime, PP_POLLTIME, default
// 200us, passed in pollTimeEnv). Each program's CPU per round trip is the
// user and system time of both its processes (getrusage of the ended
// children) over the iterations, less what runs of 20 iterations spend
// (start-up, exchange, teardown), reported as cpu-us/rt-*. Both programs'
// binaries run from copies in the guest's tmpfs. With PP_MIXED set it
// also times ours against rdma-core's in both roles. Run it in the VM:
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
	pollT := "200us"
	if s := os.Getenv("PP_POLLTIME"); s != "" {
		if _, err := time.ParseDuration(s); err != nil {
			b.Fatalf("PP_POLLTIME=%q: %v", s, err)
		}
		pollT = s
	}
	b.Setenv(pollTimeEnv, "") // restored at the end
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
			iters := max(b.N/rounds, 40)
			if mode.extra == nil {
				iters = min(iters, 100) // milliseconds a round trip
			}
			// In event mode, ours also runs with its completion
			// channel's poll time (pollTimeEnv) set: A B C, C B A.
			variants := []variant{{name: "ours", s: ours}, {name: "rdmacore", s: theirs}}
			if mode.extra != nil {
				variants = slices.Insert(variants, 1, variant{name: "ourspoll", s: ours, poll: pollT})
			}
			// The CPU a run spends outside its round trips (start-up,
			// the exchange, teardown): the median of runs of 20.
			base := make([]float64, len(variants))
			for i, v := range variants {
				var cpu []float64
				for range 3 {
					os.Setenv(pollTimeEnv, v.poll)
					cpu0 := childCPU(b)
					pingpong(b, v.s, v.s, 64, 20, mode.extra...)
					cpu = append(cpu, float64((childCPU(b) - cpu0).Microseconds()))
				}
				base[i] = median(cpu)
			}
			for r := range rounds {
				order := slices.Clone(variants)
				if r%4 == 1 || r%4 == 2 { // ABBA
					slices.Reverse(order)
				}
				for _, v := range order {
					os.Setenv(pollTimeEnv, v.poll)
					cpu0 := childCPU(b)
					_, c := pingpong(b, v.s, v.s, 64, iters, mode.extra...)
					cpu := float64((childCPU(b) - cpu0).Microseconds())
					i := slices.IndexFunc(variants, func(x variant) bool { return x.name == v.name })
					variants[i].us = append(variants[i].us, c.usecPerIter)
					variants[i].cpu = append(variants[i].cpu, (cpu-base[i])/float64(iters-20))
				}
			}
			os.Unsetenv(pollTimeEnv)
			t := &variants[len(variants)-1]
			for i := range variants {
				v := &variants[i]
				b.ReportMetric(median(v.us), "us/rt-"+v.name)
				b.ReportMetric(2e6/median(v.us), "msg/s-"+v.name)
				b.ReportMetric(median(v.cpu), "cpu-us/rt-"+v.name)
				if v == t { // rdma-core's, last
					continue
				}
				var paired []float64
				for r := range v.us {
					paired = append(paired, v.us[r]/t.us[r])
				}
				suffix := strings.TrimPrefix(v.name, "ours")
				b.ReportMetric(median(v.us)/median(t.us), "ratio-ours"+suffix+"/rdmacore")
				b.ReportMetric(median(paired), "ratio-paired"+suffix)
				b.ReportMetric(median(v.cpu)/median(t.cpu), "cpu-ratio-ours"+suffix+"/rdmacore")
			}
			if os.Getenv("PP_MIXED") != "" {
				_, m1 := pingpong(b, ours, theirs, 64, iters, mode.extra...)
				_, m2 := pingpong(b, theirs, ours, 64, iters, mode.extra...)
				b.ReportMetric(m1.usecPerIter, "us/rt-ours-srv")
				b.ReportMetric(m2.usecPerIter, "us/rt-ours-cli")
			}
		})
	}
}

// variant is one program the benchmark times, with the poll time our
// binary's completion channel gets (pollTimeEnv, empty for none), and
// what its runs measured: round trips (µs each) and CPU time (µs of both
// processes' user and system time per round trip).
type variant struct {
	name    string
	s       side
	poll    string
	us, cpu []float64
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

// childCPU is the user and system time of the test's children that have
// ended and been waited for (getrusage RUSAGE_CHILDREN): a pingpong's
// server and client once pingpong returns.
func childCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median of a non-empty sample.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
