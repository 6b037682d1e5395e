package perftest

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// parseCase is one command line perftest 4.5-0.17 refuses while parsing,
// with what it printed and its status, recorded from Debian's binaries
// on a machine without RDMA devices (so only parser refusals are here).
type parseCase struct {
	Prog   string   `json:"prog"`
	Args   []string `json:"args"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	Code   int      `json:"code"`
}

func TestParseLikePerftest(t *testing.T) {
	b, err := os.ReadFile("testdata/parse_perftest.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []parseCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, tc := range cases {
		p := programs[tc.Prog]
		var out, errb bytes.Buffer
		c, err := Parse(&out, &errb, tc.Prog, p.v, p.t, tc.Args)
		name := tc.Prog + " " + strings.Join(tc.Args, " ")
		if err == nil {
			t.Errorf("%s: accepted (%+v), perftest refuses with %q", name, c, tc.Stderr)
			continue
		}
		f, ok := err.(*Failure)
		if !ok {
			t.Errorf("%s: %T %v", name, err, err)
			continue
		}
		errb.WriteString(f.Stderr)
		if out.String() != tc.Stdout || errb.String() != tc.Stderr || f.Code != tc.Code {
			t.Errorf("%s:\nstdout %q\n  want %q\nstderr %q\n  want %q\nstatus %d, want %d", name, out.String(), tc.Stdout, errb.String(), tc.Stderr, f.Code, tc.Code)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	for _, tc := range []struct {
		prog            string
		args            []string
		size            uint64
		iters, tx, rx   int
		cqMod           int
		noPeak, isServe bool
	}{
		{"ib_write_bw", nil, 65536, 5000, 128, 1, 1, false, true},
		{"ib_send_bw", []string{"10.0.0.1"}, 65536, 1000, 128, 512, 1, false, false},
		{"ib_send_bw", nil, 65536, 1000, 128, 512, 1, true, true},
		{"ib_send_bw", []string{"-n", "20", "-c", "UD", "x"}, 65536, 20, 20, 20, 20, false, false},
		{"ib_send_lat", []string{"-n", "21"}, 2, 21, 1, 22, 1, false, true},
		{"ib_read_bw", []string{"-s", "4K", "-n", "30000", "h"}, 4096, 30000, 128, 1, 100, true, false},
	} {
		p := programs[tc.prog]
		var out, errb bytes.Buffer
		c, err := Parse(&out, &errb, tc.prog, p.v, p.t, tc.args)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.prog, tc.args, err)
		}
		if c.Size != tc.size || c.Iters != tc.iters || c.TxDepth != tc.tx || c.RxDepth != tc.rx || c.CQMod != tc.cqMod ||
			c.NoPeak != tc.noPeak || c.isServer() != tc.isServe {
			t.Errorf("%s %v: size %d iters %d tx %d rx %d cq_mod %d noPeak %v server %v", tc.prog, tc.args,
				c.Size, c.Iters, c.TxDepth, c.RxDepth, c.CQMod, c.NoPeak, c.isServer())
		}
	}
}
