package cmtime

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// TestParse: cmtime's options (outputs checked against rdma-core's v44
// cmtime).
func TestParse(t *testing.T) {
	usage := fmt.Sprintf(usageFormat, "cmtime")
	if usage != "usage: cmtime\n\t[-s server_address]\n\t[-b bind_address]\n\t[-c connections]\n\t[-p port_number]\n\t[-r retries]\n\t[-t timeout_ms]\n" {
		t.Errorf("usage %q", usage)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
		want   config
	}{
		{args: []string{"-x"}, code: 1, stderr: "cmtime: invalid option -- 'x'\n"},
		{args: []string{"-s"}, code: 1, stderr: "cmtime: option requires an argument -- 's'\n"},
		{args: []string{"-c"}, code: 1, stderr: "cmtime: option requires an argument -- 'c'\n"},
		{args: []string{"-m"}, code: 1, stderr: "cmtime: invalid option -- 'm'\n"},
		{args: nil, want: config{connections: 100, retries: 2, timeout: 2000}},
		// atoi stops at the x of 0x10 and takes leading blanks and a sign.
		{args: []string{"-s", "h", "-bA", "-c", " 10", "-r", "0x10", "-t", "-5", "-p", "99"},
			want: config{dst: "h", src: "A", connections: 10, retries: 0, timeout: -5}},
	} {
		wantOut := ""
		if tc.code != 0 {
			wantOut = usage
		}
		c, ok := cmtest.Parsed(t, tc.args, tc.code, wantOut, tc.stderr, func(stdout, stderr io.Writer) (*config, error) {
			return parse("cmtime", stdout, stderr, tc.args)
		})
		if !ok {
			continue
		}
		port := "7471"
		if tc.want.dst != "" {
			port = "99"
		}
		if c.dst != tc.want.dst || c.src != tc.want.src || c.connections != tc.want.connections ||
			c.retries != tc.want.retries || c.timeout != tc.want.timeout || c.hints.Port != port {
			t.Errorf("%q: %+v", tc.args, c)
		}
	}
}

// TestResolveTimeout: -t as package rdma takes it.
func TestResolveTimeout(t *testing.T) {
	for ms, want := range map[int]time.Duration{2000: 2 * time.Second, 1: time.Millisecond, 0: time.Millisecond,
		-5: (1 << 31) * time.Millisecond} {
		if got := (&config{timeout: ms}).resolveTimeout(); got != want {
			t.Errorf("-t %d: %v, want %v", ms, got, want)
		}
	}
}

// TestWriteTable: rows as rdma-core's cmtime printed them in the VM
// (integer µs there, from gettimeofday), for a good run, a run without
// samples, and -c 0 (C float division: inf, and 0/0's -nan on x86).
func TestWriteTable(t *testing.T) {
	const header = "step              total ms     max ms     min us  us / conn\n"
	var st [nSteps]stats
	for s := range st {
		st[s] = stats{min: noSample}
	}
	st[stepCreateID] = stats{total: 310, max: 150, min: 28}
	st[stepDestroy] = stats{total: 579, max: 140, min: 24}
	var b bytes.Buffer
	writeTable(&b, st, 2, false)
	want := header +
		"create id    :        0.31       0.15      28.00     155.00\n" +
		"resolve addr :        0.00       0.001000000000.00       0.00\n" +
		"resolve route:        0.00       0.001000000000.00       0.00\n" +
		"create qp    :        0.00       0.001000000000.00       0.00\n" +
		"connect      :        0.00       0.001000000000.00       0.00\n" +
		"disconnect   :        0.00       0.001000000000.00       0.00\n" +
		"destroy      :        0.58       0.14      24.00     289.50\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	st[stepCreateID] = stats{total: 90, min: noSample}
	st[stepDestroy] = stats{total: 20, min: noSample}
	writeTable(&b, st, 0, true)
	want = header +
		"create id    :        0.09       0.001000000000.00        inf\n" +
		"bind addr    :        0.00       0.001000000000.00       -nan\n" +
		"resolve addr :        0.00       0.001000000000.00       -nan\n" +
		"resolve route:        0.00       0.001000000000.00       -nan\n" +
		"create qp    :        0.00       0.001000000000.00       -nan\n" +
		"connect      :        0.00       0.001000000000.00       -nan\n" +
		"disconnect   :        0.00       0.001000000000.00       -nan\n" +
		"destroy      :        0.02       0.001000000000.00        inf\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	// A good run of 3 and one of 100 (rdma-core's, VM).
	b.Reset()
	st = [nSteps]stats{stepCreateID: {total: 3301, max: 360, min: 7}, stepResolveAddr: {total: 42260, max: 41950, min: 40256},
		stepResolveRoute: {total: 3206, min: noSample}, stepCreateQP: {total: 50, min: noSample},
		stepConnect: {total: 65, min: noSample}, stepDisconnect: {total: 55, min: noSample}, stepDestroy: {total: 2051, max: 530, min: 9}}
	writeTable(&b, st, 100, false)
	for _, row := range []string{
		"create id    :        3.30       0.36       7.00      33.01\n",
		"resolve addr :       42.26      41.95   40256.00     422.60\n",
		"resolve route:        3.21       0.001000000000.00      32.06\n",
		"destroy      :        2.05       0.53       9.00      20.51\n",
	} {
		if !strings.Contains(b.String(), row) {
			t.Errorf("no row %q in\n%s", row, b.String())
		}
	}
	// A negative count (C's failed calloc) divides 0 to -0.
	b.Reset()
	writeTable(&b, [nSteps]stats{}, -1, false)
	if row := "create id    :        0.00       0.00       0.00      -0.00\n"; !strings.Contains(b.String(), row) {
		t.Errorf("no row %q in\n%s", row, b.String())
	}
}

// parsed is a client's output: its lines before the table and the
// table's rows (step name and the four numbers).
type parsed struct {
	lines []string
	steps []string
	rows  [][4]float64
}

var (
	numRE = `( *(?:-?\d+\.\d\d|-?inf|-?nan))`
	rowRE = regexp.MustCompile(`^(.{13}): ` + strings.Repeat(numRE, 4) + `$`)
)

// parseOutput splits a client's output into its lines and its table,
// and checks that each row is exactly as "%-13s: %11.2f%11.2f%11.2f%11.2f"
// prints it.
func parseOutput(out string) (*parsed, error) {
	p := &parsed{}
	lines := strings.SplitAfter(out, "\n")
	if len(lines) == 0 || lines[len(lines)-1] != "" {
		return nil, fmt.Errorf("output does not end in a newline: %q", out)
	}
	lines = lines[:len(lines)-1]
	i := 0
	for ; i < len(lines) && lines[i] != "step              total ms     max ms     min us  us / conn\n"; i++ {
		p.lines = append(p.lines, strings.TrimSuffix(lines[i], "\n"))
	}
	if i == len(lines) {
		return nil, fmt.Errorf("no table header in %q", out)
	}
	for _, l := range lines[i+1:] {
		l = strings.TrimSuffix(l, "\n")
		m := rowRE.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("row %q", l)
		}
		var v [4]float64
		again := fmt.Sprintf("%-13s: ", strings.TrimRight(m[1], " "))
		for k := range v {
			f := strings.TrimSpace(m[2+k])
			switch f {
			case "inf", "-inf", "nan", "-nan":
				v[k] = math.NaN()
				if f[0] == '-' {
					v[k] = math.Copysign(v[k], -1)
				}
				if strings.HasSuffix(f, "inf") {
					v[k] = math.Inf(map[bool]int{true: -1, false: 1}[f[0] == '-'])
				}
			default:
				var err error
				if v[k], err = strconv.ParseFloat(f, 64); err != nil {
					return nil, err
				}
			}
			again += cfloat(v[k])
		}
		if again != l {
			return nil, fmt.Errorf("row %q is not as printf prints it: %q", l, again)
		}
		p.steps = append(p.steps, strings.TrimRight(m[1], " "))
		p.rows = append(p.rows, v)
	}
	return p, nil
}

// TestParseOutput: the parser the VM tests use reads rdma-core's output.
func TestParseOutput(t *testing.T) {
	out := "creating id\ngetaddrinfo error: Name or service not known\ndestroying id\n" +
		"step              total ms     max ms     min us  us / conn\n" +
		"create id    :        0.09       0.001000000000.00        inf\n" +
		"resolve addr :        0.00       0.001000000000.00       -nan\n" +
		"destroy      :      178.02      17.81    1000.25     -12.00\n"
	p, err := parseOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.lines) != 3 || len(p.rows) != 3 || p.steps[1] != "resolve addr" || p.rows[0][2] != 1e9 ||
		!math.IsInf(p.rows[0][3], 1) || !math.IsNaN(p.rows[1][3]) || p.rows[2][0] != 178.02 || p.rows[2][3] != -12 {
		t.Errorf("%+v", p)
	}
	for _, bad := range []string{"creating id\n", "step              total ms     max ms     min us  us / conn\ncreate id: 1\n",
		"step              total ms     max ms     min us  us / conn\ncreate id    :       0.09       0.00       0.00       0.00\n"} {
		if _, err := parseOutput(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
