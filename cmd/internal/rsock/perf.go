package rsock

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"
)

// Header is the first line of rstream's and riostream's table, printed
// before the first test.
const Header = "name      bytes   xfers   iters   total       time     Gb/sec    usec/xfer\n"

// Result is one finished test of rstream or riostream: iters
// iterations of count transfers of size bytes each way.
type Result struct {
	Name               string
	Size, Count, Iters int
	Elapsed            time.Duration
}

// Write prints the test's line as show_perf does (rstream's and
// riostream's are the same): elapsed
// microseconds held in a C float, the total both ways, seconds, Gb/s
// and the microseconds a one-way transfer took (a float computation).
func (r Result) Write(w io.Writer) {
	usec := float32(r.Elapsed.Microseconds())
	bytes := int64(r.Iters) * int64(r.Count) * int64(r.Size) * 2
	perXfer := usec / float32(r.Iters) / float32(int32(r.Count*2))
	fmt.Fprintf(w, "%-10s%-8s%-8s%-8s%-8s%ss%s%s\n", r.Name,
		SizeStr(int64(r.Size), 32), CntStr(int64(r.Count), 32),
		CntStr(int64(r.Iters), 32), SizeStr(bytes, 32),
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

// TestSize is one size of the programs' table; option 0 sizes (powers
// of 16 from 64) run by default, option 1 ones only with -S all.
type TestSize struct {
	Size   int
	Option int
}

// TestSizes is the table's sizes (test_size), in order.
var TestSizes = []TestSize{
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

// TestName is a table test's name: the size as size_str writes it into
// 5 bytes, then "_lat" or "_bw", cut to 9 bytes.
func TestName(size int, kind string) string {
	s := SizeStr(int64(size), 5) + kind
	if len(s) > 9 {
		s = s[:9]
	}
	return s
}

// perfTail is what follows a table line's counts: seconds, Gb/s and
// microseconds per transfer.
var perfTail = regexp.MustCompile(`^ *\d+\.\d\ds *(\d+\.\d\d|inf|-nan) *(\d+\.\d\d|inf|-nan)$`)

// TableRows checks that out is a table as Result.Write prints it after
// Header, and returns its lines without the measured part (the first
// 42 bytes: name, bytes, xfers, iters, total), for tests to compare.
func TableRows(out string) ([]string, error) {
	if !strings.HasPrefix(out, Header) || !strings.HasSuffix(out, "\n") {
		return nil, fmt.Errorf("no table:\n%s", out)
	}
	var rows []string
	for _, l := range strings.Split(strings.TrimSuffix(out[len(Header):], "\n"), "\n") {
		if len(l) < 42 || !perfTail.MatchString(l[42:]) {
			return nil, fmt.Errorf("bad table line %q in\n%s", l, out)
		}
		rows = append(rows, l[:42])
	}
	return rows, nil
}
