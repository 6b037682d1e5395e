package rstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/internal/rxetest"
	"github.com/rdmastack/rdmastack/internal/testenv"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/rdma/rsocket"
	"github.com/rdmastack/rdmastack/uverbs"
)

// wireRstream runs rstream pairs across the wire of a test/vm pair: side
// 0's guest serves, side 1's connects; each run's figure is MB/s from
// the client's usec/xfer (one transfer is size bytes each way).
type wireRstream struct {
	w     *testenv.WireEnv
	dev   uint32
	n     int // runs so far: the runs' rendezvous names
	size  int
	count int
}

// run makes one run of s and returns its MB/s. A side whose Main is ours
// in-process (pingPong) prints its µs per transfer alone; a program
// prints rstream's table.
func (r *wireRstream) run(b *testing.B, s cmtest.Side) float64 {
	r.n++
	args := []string{"-S", strconv.Itoa(r.size), "-C", strconv.Itoa(r.count)}
	v := cmtest.WireRun(b, r.w, fmt.Sprintf("%s/%d-%s", b.Name(), r.n, s.Name), s,
		func(port uint16) error {
			return cmtest.WaitListen(r.dev, netip.AddrPortFrom(r.w.Self, port), 20*time.Second)
		},
		func(port uint16, client bool) []string {
			if client {
				return append([]string{"-s", r.w.Peer.String(), "-p", strconv.Itoa(int(port))}, args...)
			}
			return append([]string{"-b", r.w.Self.String(), "-p", strconv.Itoa(int(port))}, args...)
		},
		func(rc cmtest.Result) (string, error) {
			rows := strings.Split(strings.TrimSpace(rc.Stdout), "\n")
			f := strings.Fields(rows[len(rows)-1])
			if len(f) == 0 || (s.Main == nil && len(f) != 8) {
				return "", errors.New("no usec/xfer in the client's output")
			}
			return f[len(f)-1], nil
		})
	us, err := strconv.ParseFloat(v, 64)
	if err != nil || us <= 0 {
		b.Fatalf("the client's usec/xfer %q: %v", v, err)
	}
	return float64(r.size) / us
}

// BenchmarkWireRstream is BenchmarkRstream across the wire of a test/vm
// pair: our rstream pair against rdma-core's, as processes copied to
// tmpfs, in 4 rounds of ABBA order after a warm-up run; the figure is
// the client's MB/s (size bytes each way per transfer), median of the
// rounds, which both halves report.
//
//	go run ./test/vm test -unit=false -scale= -- -test.run '^$' -test.bench BenchmarkWireRstream/
func BenchmarkWireRstream(b *testing.B) {
	w, dev := rxetest.Wire(b)
	o, t := cmtest.Binaries(b, "rstream")
	for _, c := range []struct{ size, count int }{{64, 1000}, {4096, 1000}, {65536, 100}} {
		b.Run("size="+strconv.Itoa(c.size), func(b *testing.B) {
			r := &wireRstream{w: w, dev: dev, size: c.size, count: c.count}
			for range b.N {
				mo, mt := cmtest.WireABBA(4, o, t, func(s cmtest.Side) float64 { return r.run(b, s) })
				b.ReportMetric(mo, "MBps-ours")
				b.ReportMetric(mt, "MBps-rdmacore")
				b.ReportMetric(mo/mt, "ratio-ours/rdmacore")
			}
		})
	}
}

// wireFaults is the netem of BenchmarkWireRstreamFaults, on both guests'
// egress.
const wireFaults = "loss 1% reorder 5% duplicate 1% corrupt 0.1% delay 1ms"

// BenchmarkWireRstreamFaults measures goodput under faults (wireFaults on
// both guests' egress) as a fraction of the clean wire's: rdma-core's
// rstream pair against our rstream pair, in 2 rounds of ABBA order on the
// clean wire (after a warm-up run) and again under netem, 512 KiB each way
// (64 KiB transfers) per run. Then our rsockets in-process (pingPong,
// rstream's transfer loop over rsocket.Dial and Listen) with the CM's ACK
// timeout, and with each of ackTimeouts set through Dialer.Control and
// ListenConfig.Control, once each under netem: "ack=N" reports its MB/s
// and the QP's timeout exponent each side's Conn.Control queried.
//
//	go run ./test/vm test -unit=false -scale= -- -test.run '^$' -test.bench BenchmarkWireRstreamFaults
func BenchmarkWireRstreamFaults(b *testing.B) {
	w, dev := rxetest.Wire(b)
	o, t := cmtest.Binaries(b, "rstream")
	r := &wireRstream{w: w, dev: dev, size: 65536, count: 8}
	run := func(s cmtest.Side) float64 { return r.run(b, s) }
	for range b.N {
		co, ct := cmtest.WireABBA(2, o, t, run)
		w.Netem(b, wireFaults)
		w.Sync(b, b.Name()+"/netem")
		var fo, ft []float64
		for i := range 2 {
			order := []cmtest.Side{o, t}
			if i == 1 {
				order = []cmtest.Side{t, o}
			}
			for _, s := range order {
				if s.Name == o.Name {
					fo = append(fo, run(s))
				} else {
					ft = append(ft, run(s))
				}
			}
		}
		mo, mt := cmtest.Median(fo), cmtest.Median(ft)
		b.ReportMetric(co, "MBps-clean-ours")
		b.ReportMetric(ct, "MBps-clean-rdmacore")
		b.ReportMetric(mo, "MBps-faults-ours")
		b.ReportMetric(mt, "MBps-faults-rdmacore")
		b.ReportMetric(mo/co, "goodput-ours")
		b.ReportMetric(mt/ct, "goodput-rdmacore")
		b.ReportMetric(mo/mt, "ratio-ours/rdmacore")
		for _, ack := range ackTimeouts {
			var got [2]int
			mb := run(pingPong(fmt.Sprintf("ack=%d", ack), r.size, r.count, ack, &got))
			name := "cm"
			if ack >= 0 {
				name = strconv.Itoa(ack)
			}
			peer := w.Exchange(b, fmt.Sprintf("%s/ack=%d/timeout", b.Name(), ack), fmt.Sprint(got[w.Side]))
			b.ReportMetric(mb, "MBps-faults-inproc-ack"+name)
			b.ReportMetric(float64(got[w.Side]), "qptimeout-side"+strconv.Itoa(w.Side)+"-ack"+name)
			p, _ := strconv.Atoi(peer)
			b.ReportMetric(float64(p), "qptimeout-side"+strconv.Itoa(1-w.Side)+"-ack"+name)
		}
		w.NetemOff(b)
		w.Sync(b, b.Name()+"/clean")
	}
}

// ackTimeouts are the ACK timeout exponents BenchmarkWireRstreamFaults
// tries on our rsockets in-process: -1 is the CM's.
var ackTimeouts = []int{-1, 14}

// pingPong is ours in-process as rstream's transfer loop (each of count
// transfers: the client writes size bytes and reads size back, the
// server the reverse) over rsocket's Dial and Listen with the ACK timeout
// exponent ack set through their Control hooks (-1: the CM's). It takes
// rstream's -b/-s ADDR -p PORT and prints the client's µs per transfer;
// got[side] is the timeout its QP has (side 0 the server).
func pingPong(name string, size, count, ack int, got *[2]int) cmtest.Side {
	ctl := func(id *rdma.ID) error {
		if ack < 0 {
			return nil
		}
		return id.SetOption(rdma.OptionAckTimeout, ack)
	}
	return cmtest.Side{Name: name, Main: func(stdout, _ io.Writer, args []string) error {
		if len(args) < 4 {
			return fmt.Errorf("args %q: want -b|-s ADDR -p PORT", args)
		}
		addr := args[1] + ":" + args[3]
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		var c *rsocket.Conn
		side := 0
		if args[0] == "-s" {
			side = 1
			var err error
			if c, err = (&rsocket.Dialer{Control: ctl}).DialContext(ctx, "rdma", addr); err != nil {
				return err
			}
		} else {
			l, err := (&rsocket.ListenConfig{Control: ctl}).Listen(ctx, "rdma", addr)
			if err != nil {
				return err
			}
			defer l.Close()
			if c, err = l.AcceptConn(ctx); err != nil {
				return err
			}
		}
		defer c.Close()
		if err := c.Control(func(_ *rdma.ID, qp *uverbs.QP) error {
			a, err := qp.Query(uverbs.QPAttrTimeout)
			if err == nil {
				got[side] = int(a.Timeout)
			}
			return err
		}); err != nil {
			return err
		}
		dl, _ := ctx.Deadline()
		c.SetDeadline(dl)
		buf := make([]byte, size)
		start := time.Now()
		for range count {
			if side == 1 {
				if _, err := c.Write(buf); err != nil {
					return err
				}
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				return err
			}
			if side == 0 {
				if _, err := c.Write(buf); err != nil {
					return err
				}
			}
		}
		if side == 1 {
			fmt.Fprintf(stdout, "%.2f\n", float64(time.Since(start).Microseconds())/float64(count))
		}
		return nil
	}}
}
