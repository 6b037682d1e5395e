package rdmaep

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// TestParse: both programs' getopt "s:p:" and usage (as rdma-core's v44
// programs print them); a bad command line never prints "start".
func TestParse(t *testing.T) {
	usage := func(prog string) string { return "usage: " + prog + "\n\t[-s server_address]\n\t[-p port_number]\n" }
	for _, tc := range []struct {
		main           func(stdout, stderr *bytes.Buffer, args []string) error
		prog           string
		args           []string
		stdout, stderr string
	}{
		{func(o, e *bytes.Buffer, a []string) error { return ServerMain(o, e, a) }, "rdma_server", []string{"-x"},
			usage("rdma_server"), "rdma_server: invalid option -- 'x'\n"},
		{func(o, e *bytes.Buffer, a []string) error { return ClientMain(o, e, a) }, "rdma_client", []string{"-s"},
			usage("rdma_client"), "rdma_client: option requires an argument -- 's'\n"},
		{func(o, e *bytes.Buffer, a []string) error { return ClientMain(o, e, a) }, "rdma_client", []string{"-p", "1", "-b", "x"},
			usage("rdma_client"), "rdma_client: invalid option -- 'b'\n"},
	} {
		var so, se bytes.Buffer
		err := tc.main(&so, &se, tc.args)
		var ee *cmnode.ExitError
		if !errors.As(err, &ee) || ee.Code != 1 || so.String() != tc.stdout || se.String() != tc.stderr {
			t.Errorf("%s %q: %v, stdout %q, stderr %q", tc.prog, tc.args, err, so.String(), se.String())
		}
	}
	for _, tc := range []struct {
		server string
		args   []string
		want   config
	}{
		{"0.0.0.0", nil, config{"0.0.0.0", "7471"}},
		{"127.0.0.1", []string{"-s", "10.0.0.1", "-p7000"}, config{"10.0.0.1", "7000"}},
		{"127.0.0.1", []string{"-s", "a", "-s", "b", "extra"}, config{"b", "7471"}},
	} {
		c, err := parse("p", tc.server, &bytes.Buffer{}, &bytes.Buffer{}, tc.args)
		if err != nil || *c != tc.want {
			t.Errorf("%q: %+v, %v", tc.args, c, err)
		}
	}
}

// TestLookupFailure: a port rdma_getaddrinfo refuses ends the run with
// getaddrinfo's text and code, after "start" and before "end".
func TestLookupFailure(t *testing.T) {
	var so, se bytes.Buffer
	err := ServerMain(&so, &se, []string{"-p", "port"})
	var ee *cmnode.ExitError
	want := "rdma_server: start\nrdma_getaddrinfo: Servname not supported for ai_socktype\nrdma_server: end -8\n"
	if !errors.As(err, &ee) || ee.Code != -8 || so.String() != want || se.Len() != 0 {
		t.Errorf("%v, stdout %q, stderr %q", err, so.String(), se.String())
	}
}
