package riostream

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// TestParse: riostream's own options (the shared ones are rsock's,
// TestCommonSet).
func TestParse(t *testing.T) {
	def := config{Common: rsock.NewCommon(), Modes: rsock.Modes{Nonblocking: true}}
	with := func(f func(c *config)) config { c := def; f(&c); return c }
	for _, tc := range []struct {
		args []string
		want config
	}{
		{nil, def},
		{[]string{"-s", "10.0.0.1", "-S", "all"}, with(func(c *config) { c.Dst, c.AllSizes = "10.0.0.1", true })},
		{[]string{"-T", "v", "-T", "a"}, with(func(c *config) { c.Verify, c.Async = true, true })},
		{[]string{"-T", "ASYNCx", "-T", "Verify"}, with(func(c *config) { c.Verify, c.Async = true, true })},
		{[]string{"-T", "b"}, with(func(c *config) { c.Nonblocking = false })},
		{[]string{"-T", "blocking", "-T", "nonblocking"}, with(func(c *config) {})},
		{[]string{"-f", "gid"}, with(func(c *config) { c.GID = true })},
	} {
		var so, se bytes.Buffer
		c, err := parse("riostream", &so, &se, tc.args)
		if err != nil || !reflect.DeepEqual(*c, tc.want) || so.Len() != 0 || se.Len() != 0 {
			t.Errorf("%q: %+v, %v (stdout %q, stderr %q)\nwant %+v", tc.args, c, err, so.String(), se.String(), tc.want)
		}
	}
}

// TestParseErrors: what riostream prints and returns for a bad command
// line. The usage is rdma-core v44's, recorded in the VM with
// "riostream -h" (testdata/usage.txt); rstream's -T s, f and r are not
// riostream's.
func TestParseErrors(t *testing.T) {
	rec, err := os.ReadFile("testdata/usage.txt")
	if err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf(usage, "riostream")
	if u != string(rec) {
		t.Fatalf("usage:\n%s\nrecorded:\n%s", u, rec)
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-h"}, "riostream: invalid option -- 'h'\n"},
		{[]string{"-T", "x"}, ""},
		{[]string{"-T", "s"}, ""},
		{[]string{"-T", "asy"}, ""},
		{[]string{"-k", "5"}, "riostream: invalid option -- 'k'\n"},
		{[]string{"-s"}, "riostream: option requires an argument -- 's'\n"},
	} {
		var so, se bytes.Buffer
		_, err := parse("riostream", &so, &se, tc.args)
		var ee *cmnode.ExitError
		if !errors.As(err, &ee) || ee.Code != 1 || so.String() != u || se.String() != tc.stderr {
			t.Errorf("%q: %v\nstdout %q\nstderr %q", tc.args, err, so.String(), se.String())
		}
	}
	var so, se bytes.Buffer
	if _, err := parse("riostream", &so, &se, []string{"-f", "name"}); err != nil || se.String() != "Warning: unknown address format\n" {
		t.Errorf("-f name: %v, stderr %q", err, se.String())
	}
}
