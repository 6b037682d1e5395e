package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestNtop checks glibc inet_ntop's forms, which ibv_devinfo prints for
// RoCE v2 GIDs.
func TestNtop(t *testing.T) {
	for s, want := range map[string]string{
		"fe80::5054:ff:fe12:3456": "fe80::5054:ff:fe12:3456",
		"::ffff:10.77.0.1":        "::ffff:10.77.0.1",
		"::1.2.3.4":               "::1.2.3.4",
		"2001:db8:0:1:0:0:0:1":    "2001:db8:0:1::1",
		"1:0:2:0:3:0:4:0":         "1:0:2:0:3:0:4:0",
		"1::":                     "1::",
		"::":                      "::",
		"1:0:0:2:0:0:0:3":         "1:0:0:2::3",
		"1:0:0:2:3:0:0:4":         "1::2:3:0:0:4",
	} {
		g, err := ib.ParseGID(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := ntop(g); got != want {
			t.Errorf("ntop(%s) = %q, want %q", s, got, want)
		}
	}
}

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want options
	}{
		{[]string{"-d", "rxe0", "-v"}, options{dev: "rxe0", verbose: true}},
		{[]string{"-drxe1", "-i2"}, options{dev: "rxe1", port: 2}},
		{[]string{"--ib-dev=rxe0", "--ib-port", "0x1"}, options{dev: "rxe0", port: 1}},
		{[]string{"--verb", "-l"}, options{verbose: true, list: true}},
		{[]string{"-vl"}, options{verbose: true, list: true}},
	} {
		o, err := parseArgs(&bytes.Buffer{}, tc.args)
		if err != nil || o == nil || *o != tc.want {
			t.Errorf("parseArgs(%q) = %+v, %v; want %+v", tc.args, o, err, tc.want)
		}
	}
	for _, args := range [][]string{{"-x"}, {"-d"}, {"--nope"}} {
		var out bytes.Buffer
		_, err := parseArgs(&out, args)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 255 || !bytes.HasPrefix(out.Bytes(), []byte("Usage: ibv_devinfo")) {
			t.Errorf("parseArgs(%q) = %v, printed %q; want the usage and status 255", args, err, out.String())
		}
	}
	for _, args := range [][]string{{"-i", "0"}, {"-i", "x"}} {
		_, err := parseArgs(&bytes.Buffer{}, args)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 1 {
			t.Errorf("parseArgs(%q) = %v, want status 1", args, err)
		}
	}
}

// TestArgsMessages: a bad option gives glibc's complaint for stderr, in
// the words rdma-core's ibv_devinfo prints (checked against it).
func TestArgsMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-x"}, "ibv_devinfo: invalid option -- 'x'"},
		{[]string{"--nope"}, "ibv_devinfo: unrecognized option '--nope'"},
		{[]string{"-d"}, "ibv_devinfo: option requires an argument -- 'd'"},
		{[]string{"--ib"}, "ibv_devinfo: option '--ib' is ambiguous; possibilities: '--ib-dev' '--ib-port'"},
		{[]string{"--list=1"}, "ibv_devinfo: option '--list' doesn't allow an argument"},
		{[]string{"-i", "0"}, ""},
	} {
		_, err := parseArgs(&bytes.Buffer{}, tc.args)
		var ee *exitError
		if !errors.As(err, &ee) || ee.msg != tc.msg {
			t.Errorf("parseArgs(%q) = %v, want the message %q", tc.args, err, tc.msg)
		}
	}
}

// TestPrintCaps: the capability lines as rdma-core's ibv_devinfo -v
// prints them, names from uverbs' one table.
func TestPrintCaps(t *testing.T) {
	var b bytes.Buffer
	p := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	c := uverbs.DeviceResizeMaxWR | uverbs.DeviceMemMgtExtensions | 1<<16
	printCaps(p, c.Names(), uint64(c.Unknown()))
	if want := "\t\t\t\t\tRESIZE_MAX_WR\n\t\t\t\t\tMEM_MGT_EXTENSIONS\n\t\t\t\t\tUnknown flags: 0x10000\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
