package perftest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestMain lets the test binary be ours as a process (cmtest.Self): its
// first argument names the program.
func TestMain(m *testing.M) {
	cmtest.RunSelf(func(stdout, stderr io.Writer, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("no program named")
		}
		return Command(args[0], stdout, stderr, args)
	})
	os.Exit(m.Run())
}

// siwPair runs prog over rdma_cm (-R, the only way an iWARP QP reaches
// RTS): the server on siw0, the client on siw1 in the peer namespace
// (client must be a program side: ours as a process or perftest's),
// and fails tb unless both end well. A side that is the test binary
// itself (cmtest.Self) gets the program's name first.
func siwPair(tb testing.TB, e *testenv.SIWEnv, dev uint32, prog string, server, client cmtest.Side, extra ...string) (rs, rc cmtest.Result) {
	tb.Helper()
	rs, rc = siwPairNoFail(tb, e, dev, prog, server, client, extra...)
	if rs.Code != 0 || rc.Code != 0 {
		tb.Fatalf("%s server %v: %v\nclient %v: %v", prog, server, rs, client, rc)
	}
	return rs, rc
}

func siwPairNoFail(tb testing.TB, e *testenv.SIWEnv, dev uint32, prog string, server, client cmtest.Side, extra ...string) (rs, rc cmtest.Result) {
	tb.Helper()
	port := int(nextPort.Add(1))
	common := append([]string{"-R", "-F", "-p", strconv.Itoa(port)}, extra...)
	args := func(s cmtest.Side, a []string) []string {
		if s.IsSelf() { // the test binary as ours: the program first
			return append([]string{prog}, a...)
		}
		return a
	}
	client = client.InNetns(e.PeerNetns)
	ws := server.Start(args(server, append([]string{"-d", e.Dev}, common...)), 150*time.Second)
	testenv.WaitFor(tb, "the server to listen", func() bool { return cmListening(tb, dev, port) })
	rc = client.Start(args(client, append(append([]string{"-d", e.PeerDev}, common...), e.Addr.String())), 150*time.Second)()
	rs = ws()
	return rs, rc
}

// siwProgs are perftest's RC programs on siw with their message sizes
// (20 iterations unless iters says), and the bandwidth ones
// bidirectional (-b). ib_send_bw with 1500 iterations runs at its
// default RX depth of 512: its credits (every 170 receives and each
// 512th) wrap the receive queue several times.
var siwProgs = []struct {
	prog  string
	size  int
	bidi  bool
	iters int
}{
	{"ib_send_bw", 65536, false, 0}, {"ib_write_bw", 65536, false, 0}, {"ib_read_bw", 65536, false, 0},
	{"ib_send_lat", 2, false, 0}, {"ib_write_lat", 2, false, 0}, {"ib_read_lat", 2, false, 0},
	{"ib_send_bw", 65536, true, 0}, {"ib_write_bw", 65536, true, 0}, {"ib_read_bw", 65536, true, 0},
	{"ib_send_bw", 4096, false, 1500}, {"ib_send_bw", 4096, true, 1500},
}

// TestIntegrationSIWPerftest: on Soft-iWARP, perftest's RC programs over
// rdma_cm against perftest's in both roles (the server on siw0, the
// client on siw1 in the peer namespace; ours there as a process), each
// side's table checked, nothing left on the device. ib_send_bw runs
// with perftest's iWARP send credits (credit.go).
func TestIntegrationSIWPerftest(t *testing.T) {
	e, dev := cmtest.SIW(t)
	for _, tc := range siwProgs {
		theirs := cmtest.Side{Name: "perftest", Oracle: testenv.Oracle(t, tc.prog)}
		ours := end{prog: tc.prog}.side(t)
		name, iters := tc.prog, 20
		args := []string{}
		if tc.iters != 0 {
			iters = tc.iters
			name += "-n" + strconv.Itoa(iters)
			args = append(args, "-s", strconv.Itoa(tc.size))
		}
		args = append(args, "-n", strconv.Itoa(iters))
		if tc.bidi {
			name += "-b"
			args = append(args, "-b")
		}
		for _, roles := range [][2]cmtest.Side{{ours, theirs}, {theirs, cmtest.Self("ours")}} {
			t.Run(fmt.Sprintf("%s/server=%v", name, roles[0]), func(t *testing.T) {
				cmtest.NoCMIDsLeft(t, dev)
				cmtest.NoQPsLeft(t, dev)
				rs, rc := siwPair(t, e, dev, tc.prog, roles[0], roles[1], args...)
				checkOutputs(t, tc.prog, true, tc.size, iters, rs.Stdout, rc.Stdout)
			})
		}
	}
}

// BenchmarkSIWPerftest compares ours with perftest on Soft-iWARP, both
// as processes from tmpfs (the server on siw0, the client on siw1 in the
// peer namespace), in rounds (PT_ROUNDS, default 4) in ABBA order: the
// clients' average MB/s of send, write and read bandwidth at 64 KiB and
// the t_typical µs of write latency. b.N is each run's iterations (-n).
// Ours also runs with a spare P (GOMAXPROCS=2, "2P", as ucmatose and
// cmtime keep with cmnode.KeepSpareP) for the record: on siw it costs
// (docs/benchmarks.md), so the perftest drop-ins keep the default.
//
//	go run ./test/vm test -unit=false -race none -wire=false -scale '' -- -test.run XXX -test.bench SIWPerftest -test.benchtime 2000x
func BenchmarkSIWPerftest(b *testing.B) {
	e, dev := cmtest.SIW(b)
	rounds := ptRounds(b)
	for _, tg := range []struct {
		name, prog, unit string
		args             []string
		col              int
		lat              bool
	}{
		{"send-bw", "ib_send_bw", "MB/s", []string{"-s", "65536"}, 4, false},
		{"write-bw", "ib_write_bw", "MB/s", []string{"-s", "65536"}, 4, false},
		{"read-bw", "ib_read_bw", "MB/s", []string{"-s", "65536"}, 4, false},
		{"write-lat", "ib_write_lat", "us-typical", nil, 5, true},
	} {
		b.Run(tg.name, func(b *testing.B) {
			if _, err := exec.LookPath(tg.prog); err != nil {
				b.Fatal(err)
			}
			ours, theirs := cmtest.Binaries(b, tg.prog)
			args := append(append([]string(nil), tg.args...), "-n", strconv.Itoa(max(b.N, 5)))
			twoP := ours
			twoP.Name, twoP.Env = "ours-2P", append(twoP.Env, "GOMAXPROCS=2")
			var o, o2, t []float64
			cmtest.Alternate(rounds, [][2]cmtest.Side{{ours, ours}, {theirs, theirs}, {twoP, twoP}}, func(server, client cmtest.Side) {
				_, rc := siwPair(b, e, dev, tg.prog, server, client, args...)
				re := bwRow
				if tg.lat {
					re = latRow
				}
				m := re.FindStringSubmatch(rc.Stdout)
				if m == nil {
					b.Fatalf("%v: no row:\n%s", client, rc.Stdout)
				}
				v, _ := strconv.ParseFloat(strings.TrimSpace(m[tg.col]), 64)
				switch server.Name {
				case ours.Name:
					o = append(o, v)
				case twoP.Name:
					o2 = append(o2, v)
				default:
					t = append(t, v)
				}
			})
			mo, mo2, mt := median(o), median(o2), median(t)
			b.ReportMetric(mo, tg.unit+"-ours")
			b.ReportMetric(mt, tg.unit+"-perftest")
			b.ReportMetric(mo/mt, "ratio-ours/perftest")
			b.ReportMetric(mo2/mt, "ratio-ours-2P/perftest")
		})
	}
}

// TestIntegrationSIWPerftestLongRun: an ib_write_bw -R run longer than
// check_alive's 60 s, ours serving (it hears nothing on its exchange
// connection until the client's closing exchange) and perftest's client
// on siw1 running for 65 s: both end well, as perftest's pair does
// (rdma_read_keys waits without a limit); ours once gave up at 60 s.
func TestIntegrationSIWPerftestLongRun(t *testing.T) {
	e, dev := cmtest.SIW(t)
	cmtest.NoCMIDsLeft(t, dev)
	cmtest.NoQPsLeft(t, dev)
	ours := end{prog: "ib_write_bw"}.side(t)
	theirs := cmtest.Side{Name: "perftest", Oracle: testenv.Oracle(t, "ib_write_bw")}
	start := time.Now()
	_, rc := siwPair(t, e, dev, "ib_write_bw", ours, theirs, "-s", "65536", "-D", "65")
	if took := time.Since(start); took < 65*time.Second {
		t.Errorf("the run took %v, not the 65 s asked for", took)
	}
	if !bwRow.MatchString(rc.Stdout) {
		t.Errorf("perftest's client printed no result row:\n%s", rc.Stdout)
	}
}
