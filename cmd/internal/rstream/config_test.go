package rstream

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// TestParse: rstream's own options (the shared ones are rsock's,
// TestCommonSet).
func TestParse(t *testing.T) {
	def := config{Common: rsock.NewCommon(), Modes: rsock.Modes{Nonblocking: true}}
	with := func(f func(c *config)) config { c := def; f(&c); return c }
	for _, tc := range []struct {
		args []string
		want config
	}{
		{nil, def},
		{[]string{"-s", "10.0.0.1", "-C", "5"}, with(func(c *config) { c.Dst, c.Custom, c.Count = "10.0.0.1", true, 5 })},
		{[]string{"-B", "4096", "-i", "0", "-k", "7"}, with(func(c *config) { c.Buffer, c.Inline, c.keepalive = 4096, 0, 7 })},
		{[]string{"-T", "s", "-T", "v", "-T", "a", "-T", "r"}, with(func(c *config) { c.sockets, c.Verify, c.Async, c.resolve = true, true, true, true })},
		{[]string{"-T", "socketS", "-T", "VERIFY"}, with(func(c *config) { c.sockets, c.Verify = true, true })},
		{[]string{"-T", "b"}, with(func(c *config) { c.Nonblocking = false })},
		{[]string{"-T", "blocking", "-T", "nonblocking"}, with(func(c *config) {})},
		{[]string{"-T", "f"}, with(func(c *config) { c.fork, c.sockets = true, true })},
		{[]string{"-f", "ip"}, with(func(c *config) { c.Numeric = true })},
		{[]string{"-f", "gid"}, with(func(c *config) { c.GID, c.resolve = true, true })},
	} {
		var so, se bytes.Buffer
		c, err := parse("rstream", &so, &se, tc.args)
		if err != nil || !reflect.DeepEqual(*c, tc.want) || so.Len() != 0 || se.Len() != 0 {
			t.Errorf("%q: %+v, %v (stdout %q, stderr %q)\nwant %+v", tc.args, c, err, so.String(), se.String(), tc.want)
		}
	}
}

// TestParseErrors: what rstream prints and returns for a bad command
// line (as rdma-core's v44 does; TestIntegrationRstreamErrors compares
// the two where rdma-core's is installed).
func TestParseErrors(t *testing.T) {
	u := fmt.Sprintf(usage, "rstream")
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
	}{
		{[]string{"-T", "x"}, u, ""},
		{[]string{"-T", "sock"}, u, ""},
		{[]string{"-q"}, u, "rstream: invalid option -- 'q'\n"},
		{[]string{"-s"}, u, "rstream: option requires an argument -- 's'\n"},
	} {
		var so, se bytes.Buffer
		_, err := parse("rstream", &so, &se, tc.args)
		var ee *cmnode.ExitError
		if !errors.As(err, &ee) || ee.Code != 1 || so.String() != tc.stdout || se.String() != tc.stderr {
			t.Errorf("%q: %v\nstdout %q\nstderr %q", tc.args, err, so.String(), se.String())
		}
	}
	var so, se bytes.Buffer
	if _, err := parse("rstream", &so, &se, []string{"-f", "name"}); err != nil || se.String() != "Warning: unknown address format\n" {
		t.Errorf("-f name: %v, stderr %q", err, se.String())
	}
}
