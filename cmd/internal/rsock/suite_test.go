package rsock

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestCommonSet: the options rstream and riostream share, as their
// mains take them.
func TestCommonSet(t *testing.T) {
	def := NewCommon()
	with := func(f func(c *Common)) Common { c := def; f(&c); return c }
	for _, tc := range []struct {
		opts   string // option letters, each taking the next argument
		args   []string
		want   Common
		stderr string
	}{
		{"sbp", []string{"10.0.0.1", "10.0.0.2", "9000"}, with(func(c *Common) { c.Dst, c.Src, c.Port = "10.0.0.1", "10.0.0.2", "9000" }), ""},
		{"S", []string{"all"}, with(func(c *Common) { c.AllSizes = true }), ""},
		{"S", []string{"ALLx"}, with(func(c *Common) { c.AllSizes = true }), ""},
		{"S", []string{"64k"}, with(func(c *Common) { c.Custom, c.Size = true, 64 }), ""},
		{"CI", []string{"5", "0x10"}, with(func(c *Common) { c.Custom, c.Count, c.Iterations = true, 5, 0 }), ""},
		{"Bi", []string{"4096", "0"}, with(func(c *Common) { c.Buffer, c.Inline = 4096, 0 }), ""},
		{"f", []string{"ip"}, with(func(c *Common) { c.Numeric = true }), ""},
		{"f", []string{"IPv6"}, with(func(c *Common) { c.Numeric = true }), ""},
		{"f", []string{"gid"}, with(func(c *Common) { c.GID = true }), ""},
		{"f", []string{"name"}, def, "Warning: unknown address format\n"},
	} {
		c := NewCommon()
		var se bytes.Buffer
		for i, o := range tc.opts {
			if !c.Set(o, tc.args[i], &se) {
				t.Fatalf("-%c not taken", o)
			}
		}
		if !reflect.DeepEqual(c, tc.want) || se.String() != tc.stderr {
			t.Errorf("%s %q: %+v, stderr %q\nwant %+v", tc.opts, tc.args, c, se.String(), tc.want)
		}
	}
	c := NewCommon()
	for _, o := range "kTx" {
		if c.Set(o, "1", nil) {
			t.Errorf("-%c taken as a shared option", o)
		}
	}
}

// TestTests: the order of run(): one custom test on one connection, or
// two tables each on its own, a failed test skipped and a failed
// connect ending the run with its value.
func TestTests(t *testing.T) {
	run := func(c Common, failConnect int) (string, int) {
		var log strings.Builder
		var out bytes.Buffer
		conns := 0
		code := c.Tests(&out, func(int) int { return 3 }, func(inline int) int {
			conns++
			fmt.Fprintf(&log, "connect %d;", inline)
			if conns == failConnect {
				return 7
			}
			return 0
		}, func(r Result) int {
			fmt.Fprintf(&log, "%s %d %d %d;", r.Name, r.Size, r.Count, r.Iters)
			return -1
		}, func() { log.WriteString("close;") })
		if out.String() != Header {
			t.Errorf("stdout %q", out.String())
		}
		return log.String(), code
	}
	c := NewCommon()
	c.Custom, c.Size = true, 10
	if log, code := run(c, 0); log != "connect -1;custom 10 1000 1;close;" || code != -1 {
		t.Errorf("custom: %q, %d", log, code)
	}
	c = NewCommon()
	want := "connect 64;64_lat 64 1 3;4k_lat 4096 1 3;64k_lat 65536 1 3;1m_lat 1048576 1 3;close;" +
		"connect 0;64_bw 64 3 1;4k_bw 4096 3 1;64k_bw 65536 3 1;1m_bw 1048576 3 1;close;"
	if log, code := run(c, 0); log != want || code != 0 {
		t.Errorf("tables: %q, %d", log, code)
	}
	if log, code := run(c, 2); !strings.HasSuffix(log, "close;connect 0;") || code != 7 {
		t.Errorf("a failed second connect: %q, %d", log, code)
	}
	c.AllSizes = true
	if log, _ := run(c, 0); strings.Count(log, ";") != 2*len(TestSizes)+4 {
		t.Errorf("-S all: %q", log)
	}
}
