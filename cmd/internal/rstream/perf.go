package rstream

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// header is the table's first line, printed before the first test.
const header = "name      bytes   xfers   iters   total       time     Gb/sec    usec/xfer\n"

// result is one finished test.
type result struct {
	name               string
	size, count, iters int
	elapsed            time.Duration
}

// write prints the test's line as rstream's show_perf does: elapsed
// microseconds held in a C float, the total both ways, seconds, Gb/s
// and the microseconds a one-way transfer took (a float computation).
func (r result) write(w io.Writer) {
	usec := float32(r.elapsed.Microseconds())
	bytes := int64(r.iters) * int64(r.count) * int64(r.size) * 2
	perXfer := usec / float32(r.iters) / float32(int32(r.count*2))
	fmt.Fprintf(w, "%-10s%-8s%-8s%-8s%-8s%ss%s%s\n", r.name,
		rsock.SizeStr(int64(r.size), 32), rsock.CntStr(int64(r.count), 32),
		rsock.CntStr(int64(r.iters), 32), rsock.SizeStr(bytes, 32),
		cfloat(8, float64(usec)/1000000.), cfloat(10, float64(bytes*8)/(1000.*float64(usec))),
		cfloat(11, float64(perXfer)))
}

// cfloat is printf's "%<width>.2f" as glibc prints it, infinities and
// the NaN of 0/0 included ("inf", "-nan").
func cfloat(width int, v float64) string {
	switch {
	case math.IsInf(v, 1):
		return fmt.Sprintf("%*s", width, "inf")
	case math.IsInf(v, -1):
		return fmt.Sprintf("%*s", width, "-inf")
	case math.IsNaN(v):
		return fmt.Sprintf("%*s", width, "-nan")
	}
	return fmt.Sprintf("%*.2f", width, v)
}

// testSize is one size of rstream's table; option 0 sizes (powers of
// 16 from 64) run by default, option 1 ones only with -S all.
type testSize struct {
	size   int
	option int
}

var testSizes = []testSize{
	{1 << 6, 0},
	{1 << 7, 1}, {1<<7 + 1<<6, 1},
	{1 << 8, 1}, {1<<8 + 1<<7, 1},
	{1 << 9, 1}, {1<<9 + 1<<8, 1},
	{1 << 10, 1}, {1<<10 + 1<<9, 1},
	{1 << 11, 1}, {1<<11 + 1<<10, 1},
	{1 << 12, 0}, {1<<12 + 1<<11, 1},
	{1 << 13, 1}, {1<<13 + 1<<12, 1},
	{1 << 14, 1}, {1<<14 + 1<<13, 1},
	{1 << 15, 1}, {1<<15 + 1<<14, 1},
	{1 << 16, 0}, {1<<16 + 1<<15, 1},
	{1 << 17, 1}, {1<<17 + 1<<16, 1},
	{1 << 18, 1}, {1<<18 + 1<<17, 1},
	{1 << 19, 1}, {1<<19 + 1<<18, 1},
	{1 << 20, 0}, {1<<20 + 1<<19, 1},
	{1 << 21, 1}, {1<<21 + 1<<20, 1},
	{1 << 22, 1}, {1<<22 + 1<<21, 1},
}

// testName is a table test's name: the size as size_str writes it into
// 5 bytes, then "_lat" or "_bw", cut to 9 bytes.
func testName(size int, kind string) string {
	s := rsock.SizeStr(int64(size), 5) + kind
	if len(s) > 9 {
		s = s[:9]
	}
	return s
}
