package rstream

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// BenchmarkRsocketSetup is connection setup and teardown through
// rsockets, in one process: a listener whose goroutine (thread) accepts
// and closes, while the main one connects and closes, 50 times.
// rdma-core's is testdata/rsetup.c, built here with gcc against
// librdmacm.so.1; ours is the same loop through rdma/rsocket (Listen,
// AcceptConn, Dial, Close), this binary as a process (setupLoop). Both
// run on rxe0's address, and ours again with a second P, in 8 rounds
// (ABC CBA) after a warm-up; each reports its loop's connections a
// second, and its context switches and CPU per connection (getrusage
// over the loop). BenchmarkRstreamSetup times whole rstream processes
// instead, start-up included.
//
//	go run ./test/vm test -unit=false -race none -wire=false -scale '' -devices 2 -- -test.run XXX -test.bench RsocketSetup -test.benchtime 1x
func BenchmarkRsocketSetup(b *testing.B) {
	const conns = 50
	addr, _ := cmtest.RxeAddr(b)
	ours, theirs := cmtest.Self("ours"), cmtest.Side{Name: "rdma-core", Oracle: buildRsetup(b)}
	// On one CPU, ours also with a second P (what the drop-ins keep,
	// cmnode.KeepSpareP): with none idle, the scheduler takes the only
	// P from every system call that outlasts sysmon's 20 µs tick.
	spare := ours
	spare.Name, spare.Env = "ours-p2", append(slices.Clone(ours.Env), "GOMAXPROCS=2")
	sides := []cmtest.Side{ours, spare, theirs}
	// A loop is one process: Alternate's pairs name each side twice.
	pairs := [][2]cmtest.Side{{ours, ours}, {spare, spare}, {theirs, theirs}}
	for range b.N {
		rates, csw, cpu := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
		run := func(s cmtest.Side) {
			args := []string{addr.String(), strconv.Itoa(int(cmtest.Port())), strconv.Itoa(conns)}
			if s.IsSelf() {
				args = append([]string{setupArg}, args...)
			}
			r := s.Start(args, 300*time.Second)()
			l, err := parseSetupLine(r.Stdout)
			if r.Code != 0 || err != nil || l.conns != conns {
				b.Fatalf("%v: %v (%v)", s, r, err)
			}
			rates[s.Name] = append(rates[s.Name], conns/l.seconds)
			csw[s.Name] = append(csw[s.Name], float64(l.switches)/conns)
			cpu[s.Name] = append(cpu[s.Name], l.cpu*1000/conns)
		}
		run(theirs) // warm-up
		clear(rates)
		clear(csw)
		clear(cpu)
		cmtest.Alternate(8, pairs, func(s, _ cmtest.Side) { run(s) }) // ABC CBA CBA ABC
		t := cmtest.Median(rates[theirs.Name])
		for _, s := range sides {
			b.ReportMetric(cmtest.Median(rates[s.Name]), "conns/s-"+s.Name)
			b.ReportMetric(cmtest.Median(csw[s.Name]), "csw/conn-"+s.Name)
			b.ReportMetric(cmtest.Median(cpu[s.Name]), "cpums/conn-"+s.Name)
			if s.Name != theirs.Name {
				b.ReportMetric(cmtest.Median(rates[s.Name])/t, "ratio-"+s.Name+"/rdmacore")
			}
		}
	}
}

// setupArg, first among a Self process's arguments, makes it setupLoop.
const setupArg = "-rsocket-setup-loop"

// setupLoop is rsetup.c's loop through our library: args are the
// address, port and count; it prints what rsetup prints.
func setupLoop(stdout io.Writer, args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("setup loop: want address, port and count, got %q", args)
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	address := net.JoinHostPort(args[0], args[1])
	l, err := rsocket.Listen("rdma", address)
	if err != nil {
		return err
	}
	defer l.Close()
	sw0, cpu0, err := testenv.SelfUsage()
	if err != nil {
		return err
	}
	t0 := time.Now()
	accepted := make(chan error, 1)
	go func() {
		for range n {
			c, err := l.AcceptConn(context.Background())
			if err == nil {
				err = c.Close()
			}
			if err != nil {
				accepted <- err
				return
			}
		}
		accepted <- nil
	}()
	for range n {
		c, err := rsocket.Dial("rdma", address)
		if err != nil {
			return err
		}
		if err := c.Close(); err != nil {
			return err
		}
	}
	if err := <-accepted; err != nil {
		return err
	}
	d := time.Since(t0)
	sw1, cpu1, err := testenv.SelfUsage()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%d %.6f %d %.6f\n", n, d.Seconds(), sw1-sw0, (cpu1 - cpu0).Seconds())
	return err
}

// setupLine is what rsetup and setupLoop print.
type setupLine struct {
	conns    int
	seconds  float64
	switches int64
	cpu      float64 // seconds
}

func parseSetupLine(out string) (setupLine, error) {
	var l setupLine
	_, err := fmt.Sscanf(strings.TrimSpace(out), "%d %g %d %g", &l.conns, &l.seconds, &l.switches, &l.cpu)
	if err == nil && l.seconds <= 0 {
		err = fmt.Errorf("%q: no time", out)
	}
	return l, err
}

// buildRsetup compiles testdata/rsetup.c into tmpfs (binaries timed from
// the VM's 9p root pay demand paging) and returns its path.
func buildRsetup(b *testing.B) string {
	exe := filepath.Join(cmtest.TmpfsDir(b), "rsetup")
	out, err := exec.Command("gcc", "-O2", "-o", exe, filepath.Join("testdata", "rsetup.c"), "-pthread", "-l:librdmacm.so.1").CombinedOutput()
	if err != nil {
		b.Fatalf("building rsetup.c (gcc and rdma-core's librdmacm.so.1): %v\n%s", err, out)
	}
	return exe
}
