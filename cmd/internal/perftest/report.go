package perftest

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Report formats (perftest_parameters.h).
const (
	resultFmtMB    = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
	resultFmtGb    = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
	resultFmtLat   = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
	resultFmtLatDr = " #bytes        #iterations       t_avg[usec]    tps average"
)

// cyclesPerUsec is the clock's rate as perftest's get_cpu_mhz would give
// it: our "cycles" are nanoseconds.
const cyclesPerUsec = 1000

// cHex is C's "%#0<width>x": a zero value is only zeros (no 0x), others
// get 0x and zero padding after it up to width.
func cHex(v uint64, width int) string {
	if v == 0 {
		return fmt.Sprintf("%0*x", width, 0)
	}
	h := strconv.FormatUint(v, 16)
	if pad := width - 2 - len(h); pad > 0 {
		h = strings.Repeat("0", pad) + h
	}
	return "0x" + h
}

// testInfo is ctx_print_test_info for this engine's tests.
type linkInfo struct {
	dev       string
	transport string // "IB"
	linkLayer string // "IB", "Ethernet"
	mtu       int    // bytes
}

func testInfo(c *Config, l linkInfo) string {
	if c.Output != FullVerbosity {
		return ""
	}
	var b strings.Builder
	b.WriteString(resultLine)
	b.WriteString("                    " + c.title() + "\n")
	if c.Events {
		fmt.Fprintf(&b, " Test with events. Using %s_comp%d\n", l.dev, 0)
	}
	fmt.Fprintf(&b, " Dual-port       : %s\t\tDevice         : %s\n", "OFF", l.dev)
	fmt.Fprintf(&b, " Number of qps   : %d\t\tTransport type : %s\n", c.NumQPs, l.transport)
	fmt.Fprintf(&b, " Connection type : %s\t\tUsing SRQ      : %s\n", c.Conn, "OFF")
	b.WriteString(" PCIe relax order: ON\n")
	b.WriteString(" ibv_wr* API     : OFF\n")
	if !c.isServer() || c.Duplex {
		fmt.Fprintf(&b, " TX depth        : %d\n", c.TxDepth)
	}
	if c.Verb == Send && (c.isServer() || c.Duplex) {
		fmt.Fprintf(&b, " RX depth        : %d\n", c.RxDepth)
	}
	if c.Test == BW {
		fmt.Fprintf(&b, " CQ Moderation   : %d\n", c.CQMod)
	}
	fmt.Fprintf(&b, " Mtu             : %d[B]\n", l.mtu)
	fmt.Fprintf(&b, " Link type       : %s\n", l.linkLayer)
	if c.GIDIndex != -1 {
		fmt.Fprintf(&b, " GID index       : %d\n", c.GIDIndex)
	}
	if c.Verb != Read {
		fmt.Fprintf(&b, " Max inline data : %d[B]\n", c.Inline)
	} else {
		fmt.Fprintf(&b, " Outstand reads  : %d\n", c.OutReads)
	}
	fmt.Fprintf(&b, " rdma_cm QPs\t : %s\n", onOff(c.RdmaCM))
	method := "Ethernet"
	if c.RdmaCM {
		method = "rdma_cm"
	}
	fmt.Fprintf(&b, " Data ex. method : %s", method)
	if c.RdmaCM {
		if c.TOS != -1 {
			fmt.Fprintf(&b, " \tTOS    : %d", c.TOS)
		}
		if c.isServer() {
			b.WriteString("\n" + resultLine + " Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP")
		}
	}
	b.WriteString("\n" + resultLine)
	return b.String()
}

func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

// destLine is ctx_print_pingpong_data: side is "local" or "remote".
func destLine(c *Config, side string, d *Dest, withGID bool) string {
	if c.Output != FullVerbosity {
		return ""
	}
	// perftest prints with its exchange's parameters, whose verb is SEND
	// when the exchange runs over rdma_cm.
	verb := c.Verb
	if c.RdmaCM {
		verb = Send
	}
	var b strings.Builder
	fmt.Fprintf(&b, " %s address: LID %s QPN %s PSN %s", side, cHex(uint64(d.LID), 4), cHex(uint64(d.QPN), 6), cHex(uint64(d.PSN), 6))
	if verb == Read {
		fmt.Fprintf(&b, " OUT %s", cHex(uint64(d.OutReads), 4))
	}
	if verb != Send {
		fmt.Fprintf(&b, " RKey %s VAddr %s", cHex(uint64(d.RKey), 8), cHex(d.VAddr, 16))
	}
	b.WriteByte('\n')
	if withGID {
		b.WriteString(" GID: ")
		for i, x := range d.GID {
			if i > 0 {
				b.WriteByte(':')
			}
			fmt.Fprintf(&b, "%02d", x)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// bwHeader is the bandwidth table's header with its line.
func bwHeader(c *Config) string {
	if c.Output != FullVerbosity {
		return ""
	}
	h := resultFmtMB
	if c.Gbits {
		h = resultFmtGb
	}
	return resultLine + h + "\n"
}

// latHeader is the latency table's header with its line.
func latHeader(c *Config) string {
	if c.Output != FullVerbosity {
		return ""
	}
	h := resultFmtLat
	if c.DurMode {
		h = resultFmtLatDr
	}
	return resultLine + h + "\n"
}

// bwTimes is what a bandwidth loop records: the clock when each send was
// posted and when each completion was seen (noPeak: only [0], start and
// end).
type bwTimes struct {
	posted, completed []int64
}

// newBWTimes is a sender's samples for tot messages: a post and a
// completion time each, or only the first post and the last completion
// without a peak (NoPeak).
func newBWTimes(c *Config, tot uint64) *bwTimes {
	n := tot
	if c.NoPeak {
		n = 1
	}
	return &bwTimes{posted: make([]int64, n), completed: make([]int64, n)}
}

// complete stamps the completion that brings the count to totC (the
// last message's slot once cq_mod takes it past tot); none with NoPeak.
func (t *bwTimes) complete(c *Config, k clock, totC, tot uint64) {
	if !c.NoPeak {
		t.completed[min(totC, tot)-1] = k.now()
	}
}

// senderReport ends a sender's loop: with -D the sampled window and the
// completions counted in it, else all tot messages (with NoPeak the
// last completion is now).
func (t *bwTimes) senderReport(c *Config, k clock, dur *durClock, size, counted, tot uint64) Report {
	if c.DurMode {
		t.posted[0], t.completed[0] = dur.from, dur.to
		return computeBW(c, t, size, counted)
	}
	if c.NoPeak {
		t.completed[0] = k.now()
	}
	return computeBW(c, t, size, tot)
}

// computeBW is print_report_bw's arithmetic for n messages of size
// bytes: the peak over every run of consecutive completions (unless
// noPeak), the average and the message rate.
func computeBW(c *Config, t *bwTimes, size uint64, n uint64) Report {
	cqMod := uint64(max(c.CQMod, 1))
	var optDelta int64
	if len(t.completed) > 0 && len(t.posted) > 0 {
		optDelta = t.completed[0] - t.posted[0]
	}
	if !c.NoPeak {
		for i := uint64(0); i < n; i++ {
			for j := roundUp(i+1, cqMod) - 1; j < n; j += cqMod {
				if d := (t.completed[j] - t.posted[i]) / int64(j-i+1); d < optDelta {
					optDelta = d
				}
			}
			if n%cqMod != 0 {
				j := n - 1
				if d := (t.completed[j] - t.posted[i]) / int64(j-i+1); d < optDelta {
					optDelta = d
				}
			}
		}
	}
	toUnits := float64(cyclesPerUsec) * 1e6
	loc := uint64(0)
	if !c.NoPeak {
		loc = n - 1
	}
	format := float64(0x100000)
	if c.Gbits {
		format = 125000000
	}
	sum := float64(t.completed[loc] - t.posted[0])
	r := Report{Size: size, Iters: n}
	r.BWAvg = float64(size) * float64(n) * toUnits / (sum * format)
	r.MsgRateAvg = float64(n) * toUnits / (sum * 1000000)
	var up uint64
	if !c.NoPeak {
		up = size * uint64(toUnits)
	}
	down := uint64(optDelta) * uint64(format)
	r.BWPeak = float64(up) / float64(down)
	return r
}

func roundUp(v, a uint64) uint64 {
	if v%a == 0 {
		return v
	}
	return (v/a + 1) * a
}

// bwLine is print_full_bw_report's table row (without the per-port and
// QoS forms).
func bwLine(c *Config, r Report) string {
	switch c.Output {
	case OutputBW:
		return fmt.Sprintf("%f\n", r.BWAvg)
	case OutputMR:
		return fmt.Sprintf("%f\n", r.MsgRateAvg)
	}
	if r.BWAvg < 0.1 && c.Gbits {
		return fmt.Sprintf(" %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRateAvg)
	}
	return fmt.Sprintf(" %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRateAvg)
}

// latReport is print_report_lat over the post times of iters
// iterations: the RTT halves (RDMA read: whole round trips) between
// consecutive posts, sorted with the two largest left out.
func latReport(c *Config, posted []int64, size uint64) string {
	iters := len(posted)
	n := iters - 1
	rtt := 2.0
	if c.Verb == Read {
		rtt = 1
	}
	units, toUnits := "usec", float64(cyclesPerUsec)
	if c.Cycles {
		units, toUnits = "cycles", 1
	}
	q := toUnits * rtt
	delta := make([]int64, n)
	for i := range delta {
		delta[i] = posted[i+1] - posted[i]
	}
	var b strings.Builder
	if c.Unsorted {
		fmt.Fprintf(&b, "#, %s\n", units)
		for i, d := range delta {
			fmt.Fprintf(&b, "%d, %s\n", i+1, cG(float64(d)/q))
		}
	}
	slices.Sort(delta)
	n -= latTail
	if n < 1 {
		return b.String()
	}
	var median int64
	if (n-1)%2 != 0 {
		median = (delta[n/2] + delta[n/2-1]) / 2
	} else {
		median = delta[n/2]
	}
	var sum float64
	for _, d := range delta[:n] {
		sum += float64(d) / q
	}
	avg := sum / float64(n)
	var stdevSum float64
	for _, d := range delta[:n] {
		tv := cInt(avg - float64(d)/q) // perftest keeps these in C ints
		stdevSum += float64(cInt(math.Pow(float64(tv), 2)))
	}
	if c.Histogram {
		fmt.Fprintf(&b, "#, %s\n", units)
		for i, d := range delta[:n] {
			fmt.Fprintf(&b, "%d, %s\n", i+1, cG(float64(d)/q))
		}
	}
	if (c.Unsorted || c.Histogram) && c.Output == FullVerbosity {
		b.WriteString(resultLine + resultFmtLat + "\n")
	}
	lat := float64(median) / q
	stdev := math.Sqrt(stdevSum / float64(n))
	if stdevSum < 0 {
		stdev = math.Copysign(math.NaN(), -1) // x86's sqrt of a negative number
	}
	i99 := int(math.Ceil(float64(n) * 0.99))
	i999 := int(math.Ceil(float64(n) * 0.999))
	if c.Output == OutputLat {
		fmt.Fprintf(&b, "%f\n", avg)
		return b.String()
	}
	b.WriteString(latStats{size, uint64(iters), float64(delta[0]) / q, float64(delta[n]) / q, lat, avg, stdev,
		float64(delta[i99]) / q, float64(delta[i999]) / q}.line())
	return b.String()
}

// latStats is one row of the latency table.
type latStats struct {
	size, iters                              uint64
	min, max, typical, avg, stdev, p99, p999 float64
}

// line is REPORT_FMT_LAT and its newline.
func (l latStats) line() string {
	return fmt.Sprintf(" %-7d %d          %-7s        %-7s      %-7s  \t       %-7s     \t%-7s\t\t%-7s \t\t%-7s\n",
		l.size, l.iters, cF2(l.min), cF2(l.max), cF2(l.typical), cF2(l.avg), cF2(l.stdev), cF2(l.p99), cF2(l.p999))
}

// cF2 is C's "%.2f", which prints a NaN as "-nan" or "nan" by its sign
// and an infinity as "inf" or "-inf".
func cF2(v float64) string {
	switch {
	case math.IsNaN(v) && math.Signbit(v):
		return "-nan"
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// cInt is a C conversion of a double to int on x86-64 (cvttsd2si): out
// of range, it is INT_MIN. perftest's stdev sums its squares this way, so
// a spread over 46 ms overflows as it does there.
func cInt(v float64) int32 {
	if math.IsNaN(v) || v >= 1<<31 || v < -(1<<31) {
		return math.MinInt32
	}
	return int32(v)
}

// latDurationReport is print_report_lat_duration: iters round trips in
// sample nanoseconds.
func latDurationReport(c *Config, sample int64, iters uint64, size uint64) string {
	rtt := 2.0
	if c.Verb == Read {
		rtt = 1
	}
	toUnits := float64(cyclesPerUsec)
	lat := float64(sample) / toUnits / rtt / float64(iters)
	tps := float64(iters) / (float64(sample) / (toUnits * 1000000))
	if c.Output == OutputLat {
		return fmt.Sprintf("%f\n", lat)
	}
	return fmt.Sprintf(" %-7d       %d            %-7.2f        %-7.2f\n", size, iters, lat, tps)
}

// cG is C's "%g".
func cG(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
