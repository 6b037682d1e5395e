package cmtime

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// BenchmarkCmtime runs our cmtime client and rdma-core's, 50
// connections each, against one server of each kind that serves them
// all, as processes copied to tmpfs, in 8 ABBA rounds after a warm-up,
// and reports per step the median of the step's total time (the table's
// first column) as ratios, ours/rdma-core's: "<step>-ratio" for the
// clients against rdma-core's server, "pair-<step>-ratio" for our pair
// against rdma-core's pair, "server-<step>-ratio" for rdma-core's client
// against our server and against its own; and rdma-core's pair's
// medians in ms ("<step>-ms"). Command:
//
//	go run ./test/vm run -parallel 1 -devices 1 -- $PWD/out/cmtime.test -test.run XXX -test.bench Cmtime -test.benchtime 1x
func BenchmarkCmtime(b *testing.B) {
	const conns, rounds = 50, 8
	addr, dev := cmtest.RxeAddr(b)
	ours, theirs := cmtest.Binaries(b, "cmtime")
	ports := map[string]uint16{}
	for _, s := range []cmtest.Side{ours, theirs} {
		ap := netip.AddrPortFrom(addr, cmtest.Port())
		serve(b, dev, s, ap)
		ports[s.Name] = ap.Port()
	}
	steps := tableSteps(false)
	// client runs one client against the server and returns its
	// steps' totals in ms.
	client := func(server, c cmtest.Side) []float64 {
		args := []string{"-s", addr.String(), "-p", strconv.Itoa(int(ports[server.Name])), "-c", strconv.Itoa(conns)}
		r := c.Start(args, 300*time.Second)()
		checkGood(b, r, conns, false)
		p, _ := parseOutput(r.Stdout)
		v := make([]float64, len(p.rows))
		for i, row := range p.rows {
			v[i] = row[0]
		}
		return v
	}
	for range b.N {
		client(theirs, theirs) // warm-up
		got := map[[2]string][][]float64{}
		pairs := [][2]cmtest.Side{{theirs, theirs}, {theirs, ours}, {ours, ours}, {ours, theirs}}
		cmtest.Alternate(rounds, pairs, func(s, c cmtest.Side) {
			k := [2]string{s.Name, c.Name}
			got[k] = append(got[k], client(s, c))
		})
		med := func(s, c cmtest.Side, i int) float64 {
			var v []float64
			for _, run := range got[[2]string{s.Name, c.Name}] {
				v = append(v, run[i])
			}
			return cmtest.Median(v)
		}
		for i, name := range steps {
			unit := strings.ReplaceAll(name, " ", "-")
			t := med(theirs, theirs, i)
			b.ReportMetric(t, unit+"-ms")
			b.ReportMetric(med(theirs, ours, i)/t, unit+"-ratio")
			b.ReportMetric(med(ours, ours, i)/t, "pair-"+unit+"-ratio")
			b.ReportMetric(med(ours, theirs, i)/t, "server-"+unit+"-ratio")
		}
	}
}
