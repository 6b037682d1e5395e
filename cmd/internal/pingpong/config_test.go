package pingpong

import (
	"errors"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

func TestParse(t *testing.T) {
	c, err := Parse(RC, []string{"-s64", "-n", "0x10", "--iters=20", "-ec", "--gid", "1", "-m", "2048", "host"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Size != 64 || c.Iters != 20 || !c.Events || !c.Validate || c.GIDIndex != 1 || c.MTU != ib.MTU2048 || c.Server != "host" {
		t.Fatalf("%+v", c)
	}
	c, err = Parse(UD, nil)
	if err != nil || c.Size != 1024 || c.Port != 18515 || c.RxDepth != 500 || c.GIDIndex != -1 {
		t.Fatalf("UD defaults: %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-h"}, {"-m", "1000"}, {"-p", "70000"}, {"-i", "0"}, {"a", "b"}, {"-s"}, {"--nosuch"}, {"-m", "1024"}} {
		kind := RC
		if bad[0] == "-m" && bad[1] == "1024" {
			kind = UD // ud_pingpong has no -m
		}
		if _, err := Parse(kind, bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// TestParseMessages: a bad option's error carries glibc's words as
// rdma-core's programs print them (checked against rdma-core 44's, where
// they add their argv[0] in front), and is a usage error.
func TestParseMessages(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		args []string
		msg  string
	}{
		{RC, []string{"-h"}, "invalid option -- 'h'"},
		{RC, []string{"--i"}, "option '--i' is ambiguous; possibilities: '--ib-dev' '--ib-port' '--iters' '--iodp'"},
		{RC, []string{"--p"}, "option '--p' is ambiguous; possibilities: '--port' '--prefetch'"},
		{RC, []string{"--nosuch=1"}, "unrecognized option '--nosuch=1'"},
		{RC, []string{"--e=1"}, "option '--events' doesn't allow an argument"},
		{UD, []string{"--i"}, "option '--i' is ambiguous; possibilities: '--ib-dev' '--ib-port' '--iters'"},
		{UD, []string{"--p"}, "option '--port' requires an argument"},
		{UD, []string{"--n"}, "unrecognized option '--n'"},
		{UD, []string{"-s"}, "option requires an argument -- 's'"},
	} {
		_, err := Parse(tc.kind, tc.args)
		if !errors.Is(err, errUsage) || err.Error() != tc.msg+": "+errUsage.Error() {
			t.Errorf("Parse(%v, %q) = %v, want the usage error %q", tc.kind, tc.args, err, tc.msg)
		}
	}
	// A refused value is a usage error with nothing for stderr.
	for _, args := range [][]string{{"-p", "-1"}, {"-i", "0"}, {"-m", "1000"}} {
		if _, err := Parse(RC, args); err != errUsage {
			t.Errorf("Parse(%q) = %v, want errUsage itself", args, err)
		}
	}
}

// TestParseNumbers: values convert as rdma-core's variables take them.
func TestParseNumbers(t *testing.T) {
	c, err := Parse(RC, []string{"-p", "0x10", "-s", "-1", "-r", "4294967297", "-l", "010", "-g", "7z", "-i", "4294967298", "-m", "4294969344"})
	if err != nil {
		t.Fatal(err)
	}
	// size is an unsigned int (strtoul's -1 is UINT_MAX), rx_depth too
	// (2^32+1 keeps 1), ib_port and the MTU argument are ints.
	if c.Port != 16 || c.Size != 1<<32-1 || c.RxDepth != 1 || c.SL != 8 || c.GIDIndex != 7 || c.IBPort != 2 || c.MTU != ib.MTU2048 {
		t.Fatalf("%+v", c)
	}
}
