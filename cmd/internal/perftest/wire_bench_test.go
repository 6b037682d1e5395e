package perftest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// BenchmarkWirePerftest is BenchmarkPerftest across the wire of a test/vm
// pair: side 0's guest serves, side 1's connects (the client's figure,
// which both halves report), ours against perftest's as processes run
// from tmpfs, in rounds of ABBA order after a warm-up run:
//
//   - msgrate: ib_send_bw -s 64 -n 2000, the client's Mpps, 4 rounds;
//   - send-bw: ib_send_bw -s 65536 -n 1000, the client's average MB/s,
//     5 rounds of all four pairings (each program serving the other
//     too, to tell which end costs what), with the client's rxe
//     retransmission rounds a run beside them: across this wire a
//     sender faster than the receiving guest overruns it, so more
//     retransmissions come with more MB/s, not fewer;
//   - send-lat: ib_send_lat -n 200 (busy polling: perftest's own -e
//     hangs on 6.12's rxe, and both cross pairs have a 6.12 guest), the client's
//     t_typical µs, 4 rounds.
//
// Each loop of b.N runs all the rounds. Send bandwidth polls: with
// virtio-net as the wire's NIC our -e client on 6.12 hung once after its
// 6.1 server had received all 200 messages, and perftest's own pair,
// polling, failed with REM_OP_ERR (rcnt=178). It sends 1,000 messages,
// not 200: 200 last about a second, and runs of one pair spread from 6
// to 19 MB/s.
//
//	go run ./test/vm test -unit=false -race none -scale= -- -test.run '^$' -test.bench BenchmarkWirePerftest
func BenchmarkWirePerftest(b *testing.B) {
	w, _ := rxetest.Wire(b)
	gid := strconv.Itoa(rxetest.GIDIndex(b, "rxe0", w.Self))
	for _, tg := range []struct {
		name, prog, unit string
		args             []string
		col              int // the client row's column
		lat              bool
		pairings         bool // all four pairings, 5 rounds, and retransmissions
	}{
		{"msgrate", "ib_send_bw", "Mpps", []string{"-s", "64", "-n", "2000"}, 5, false, false},
		{"send-bw", "ib_send_bw", "MBps", []string{"-s", "65536", "-n", "1000"}, 4, false, true},
		{"send-lat", "ib_send_lat", "us-typical", []string{"-n", "200"}, 5, true, false},
	} {
		b.Run(tg.name, func(b *testing.B) {
			ours, theirs := cmtest.Binaries(b, tg.prog)
			theirs.Name = "perftest"
			re := bwRow
			if tg.lat {
				re = latRow
			}
			n := 0
			var retrans map[[2]string][]string // of this loop's runs
			warm := true
			run := func(server, client cmtest.Side) float64 {
				n++
				v := cmtest.WireRunSides(b, w, fmt.Sprintf("%s/%d-%s-%s", b.Name(), n, server.Name, client.Name), server, client,
					func(port uint16) error { return cmtest.WaitTCPListen(port, 20*time.Second) },
					func(port uint16, client bool) []string {
						args := append([]string{"-d", "rxe0", "-x", gid, "-F", "-p", strconv.Itoa(int(port))}, tg.args...)
						if client {
							args = append(args, w.Peer.String())
						}
						return args
					},
					measureRetrans(b, func(rc cmtest.Result) (string, error) {
						m := re.FindStringSubmatch(rc.Stdout)
						if m == nil {
							return "", errors.New("no result row")
						}
						return strings.TrimSpace(m[tg.col]), nil
					}))
				fig, counts, ok := strings.Cut(v, " ")
				f, err := strconv.ParseFloat(fig, 64)
				if !ok || err != nil {
					b.Fatalf("the client's figure %q: %v", v, err)
				}
				if warm { // each loop's first run is ABBAPairings' warm-up
					warm = false
				} else {
					k := [2]string{server.Name, client.Name}
					retrans[k] = append(retrans[k], counts)
				}
				return f
			}
			for range b.N {
				retrans, warm = map[[2]string][]string{}, true
				if !tg.pairings {
					o, t := cmtest.ABBAMedians(4, ours, theirs, func(s cmtest.Side) float64 { return run(s, s) })
					b.ReportMetric(o, tg.unit+"-ours")
					b.ReportMetric(t, tg.unit+"-perftest")
					b.ReportMetric(o/t, "ratio-ours/perftest")
					continue
				}
				f := cmtest.ABBAPairings(5, ours, theirs, run)
				t := f.Median(theirs, theirs)
				b.ReportMetric(f.Median(ours, ours), tg.unit+"-ours")
				b.ReportMetric(t, tg.unit+"-perftest")
				b.ReportMetric(f.Median(ours, ours)/t, "ratio-ours/perftest")
				b.ReportMetric(f.Median(ours, theirs)/t, "ratio-ours-server")
				b.ReportMetric(f.Median(theirs, ours)/t, "ratio-ours-client")
				b.ReportMetric(medianRetrans(b, retrans[[2]string{ours.Name, ours.Name}]), "retrans-ours")
				b.ReportMetric(medianRetrans(b, retrans[[2]string{theirs.Name, theirs.Name}]), "retrans-perftest")
				for k, v := range f {
					b.Logf("%s serving %s: %v MB/s; the client's retransmission rounds/of them on the ACK timer/RNR NAKs %v", k[0], k[1], v, retrans[k])
				}
			}
		})
	}
}

// medianRetrans is the median of the retransmission rounds in counts,
// measureRetrans's words.
func medianRetrans(tb testing.TB, counts []string) float64 {
	var v []float64
	for _, c := range counts {
		n, _, _ := strings.Cut(c, "/")
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			tb.Fatalf("retransmission rounds %q: %v", c, err)
		}
		v = append(v, f)
	}
	return cmtest.Median(v)
}

// measureRetrans wraps a client's measure so that it also returns what
// the client's rxe counted of its run: its figure, a space, and
// "R/T/N": retransmission rounds (completer_retry_err), those the ACK
// timer started rather than a sequence NAK (less rcvd_seq_err), and
// RNR NAKs received (rcvd_rnr_err). Side 0 gets them through the
// rendezvous.
func measureRetrans(tb testing.TB, measure func(cmtest.Result) (string, error)) func(cmtest.Result) (string, error) {
	before := rxetest.HWCounters(tb)
	return func(rc cmtest.Result) (string, error) {
		v, err := measure(rc)
		after := rxetest.HWCounters(tb)
		d := func(name string) uint64 { return after[name] - before[name] }
		return fmt.Sprintf("%s %d/%d/%d", v, d("completer_retry_err"), d("completer_retry_err")-min(d("completer_retry_err"), d("rcvd_seq_err")),
			d("rcvd_rnr_err")), err
	}
}
