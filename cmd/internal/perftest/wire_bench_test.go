package perftest

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// BenchmarkWirePerftest is BenchmarkPerftest across the wire of a test/vm
// pair: side 0's guest serves, side 1's connects (the client's figure,
// which both halves report), ours against ours and perftest against
// perftest as processes, in 4 rounds of ABBA order after a warm-up run:
//
//   - msgrate: ib_send_bw -s 64 -n 2000, the client's Mpps;
//   - send-bw: ib_send_bw -s 65536 -n 200, the client's average MB/s;
//   - send-lat: ib_send_lat -n 200 (busy polling: perftest's own -e
//     hangs on 6.12's rxe, and both cross pairs have a 6.12 guest), the client's
//     t_typical µs.
//
// Each loop of b.N runs all the rounds. Send bandwidth polls: with
// virtio-net as the wire's NIC our -e client on 6.12 hung once after its
// 6.1 server had received all 200 messages, and perftest's own pair,
// polling, failed with REM_OP_ERR (rcnt=178).
//
//	go run ./test/vm test -unit=false -scale= -- -test.run '^$' -test.bench BenchmarkWirePerftest
func BenchmarkWirePerftest(b *testing.B) {
	w, _ := rxetest.Wire(b)
	gid := strconv.Itoa(rxetest.GIDIndex(b, "rxe0", w.Self))
	const rounds = 4
	for _, tg := range []struct {
		name, prog, unit string
		args             []string
		col              int // the client row's column
		lat              bool
	}{
		{"msgrate", "ib_send_bw", "Mpps", []string{"-s", "64", "-n", "2000"}, 5, false},
		{"send-bw", "ib_send_bw", "MBps", []string{"-s", "65536", "-n", "200"}, 4, false},
		{"send-lat", "ib_send_lat", "us-typical", []string{"-n", "200"}, 5, true},
	} {
		b.Run(tg.name, func(b *testing.B) {
			path, err := exec.LookPath(tg.prog)
			if err != nil || path == testenv.Oracle(b, tg.prog) {
				b.Fatalf("our binary: %q, %v (perftest's is %s)", path, err, testenv.Oracle(b, tg.prog))
			}
			ours := end{prog: tg.prog, path: path}.side(b)
			theirs := end{prog: tg.prog, oracle: true}.side(b)
			re := bwRow
			if tg.lat {
				re = latRow
			}
			n := 0
			run := func(s cmtest.Side) float64 {
				n++
				v := cmtest.WireRun(b, w, fmt.Sprintf("%s/%d-%s", b.Name(), n, s.Name), s,
					func(port uint16) error { return cmtest.WaitTCPListen(port, 20*time.Second) },
					func(port uint16, client bool) []string {
						args := append([]string{"-d", "rxe0", "-x", gid, "-F", "-p", strconv.Itoa(int(port))}, tg.args...)
						if client {
							args = append(args, w.Peer.String())
						}
						return args
					},
					func(rc cmtest.Result) (string, error) {
						m := re.FindStringSubmatch(rc.Stdout)
						if m == nil {
							return "", errors.New("no result row")
						}
						return strings.TrimSpace(m[tg.col]), nil
					})
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatalf("the client's figure %q: %v", v, err)
				}
				return f
			}
			for range b.N {
				o, t := cmtest.ABBAMedians(rounds, ours, theirs, run)
				b.ReportMetric(o, tg.unit+"-ours")
				b.ReportMetric(t, tg.unit+"-perftest")
				b.ReportMetric(o/t, "ratio-ours/perftest")
			}
		})
	}
}
