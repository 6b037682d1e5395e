package pingpong

import (
	"bytes"
	"embed"
	"errors"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
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
	if err != nil || c.Size != 1024 || c.Port != 18515 || c.RxDepth != 500 || c.GIDIndex != -1 || c.NumQP != 1 {
		t.Fatalf("UD defaults: %+v, %v", c, err)
	}
	c, err = Parse(UC, []string{"-m", "4096", "-ec"})
	if err != nil || c.Size != 4096 || c.MTU != ib.MTU4096 || !c.Events || !c.Validate || c.NumQP != 1 {
		t.Fatalf("UC: %+v, %v", c, err)
	}
	c, err = Parse(SRQ, nil)
	if err != nil || c.Size != 4096 || c.NumQP != 16 || c.RxDepth != 500 || c.Iters != 1000 {
		t.Fatalf("SRQ defaults: %+v, %v", c, err)
	}
	c, err = Parse(SRQ, []string{"--num-qp=0x40", "-o", "-r", "64", "-s", "-1"})
	if err != nil || c.NumQP != 64 || !c.ODP || c.RxDepth != 64 || c.Size != 1<<32-1 {
		t.Fatalf("SRQ: %+v, %v", c, err)
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
	// srq_pingpong alone refuses an empty message; uc_pingpong has no -q.
	for _, tc := range []struct {
		kind Kind
		args []string
	}{{SRQ, []string{"-s", "0"}}, {UC, []string{"-q", "2"}}, {UC, []string{"-t"}}} {
		if _, err := Parse(tc.kind, tc.args); err == nil {
			t.Errorf("Parse(%v, %q) accepted", tc.kind, tc.args)
		}
	}
	if _, err := Parse(UC, []string{"-s", "0"}); err != nil {
		t.Errorf("uc -s 0: %v", err)
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
		{UC, []string{"--i"}, "option '--i' is ambiguous; possibilities: '--ib-dev' '--ib-port' '--iters'"},
		{UC, []string{"--p"}, "option '--port' requires an argument"},
		{UC, []string{"-o"}, "invalid option -- 'o'"},
		{UC, []string{"--odp"}, "unrecognized option '--odp'"},
		{UC, []string{"-q"}, "invalid option -- 'q'"},
		{UC, []string{"--ch=2"}, "option '--chk' doesn't allow an argument"},
		{SRQ, []string{"--n"}, "option '--num-qp' requires an argument"},
		{SRQ, []string{"--q"}, "unrecognized option '--q'"},
		{SRQ, []string{"--o=1"}, "option '--odp' doesn't allow an argument"},
		{SRQ, []string{"-eeq"}, "option requires an argument -- 'q'"},
		{SRQ, []string{"-O"}, "invalid option -- 'O'"},
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

// progs names each kind's program.
var progs = map[Kind]string{RC: "ibv_rc_pingpong", UD: "ibv_ud_pingpong", UC: "ibv_uc_pingpong", SRQ: "ibv_srq_pingpong"}

// mainOutput runs Main as a program would and returns its stdout, its
// stderr and its exit status, as cmnode.Exit makes them.
func mainOutput(kind Kind, args []string) (stdout, stderr string, status int) {
	var out bytes.Buffer
	err := Main(&out, progs[kind], kind, args)
	var ee *cmnode.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		status = ee.Code
	default:
		stderr, status = err.Error()+"\n", 1
	}
	return out.String(), stderr, status
}

// usageFiles are rdma-core's usage texts, embedded so that the test
// binary finds them from any directory.
//
//go:embed testdata/*.usage
var usageFiles embed.FS

// TestMainRefusals: what each program prints, and its exit status, for
// command lines it refuses before it looks for a device, byte for byte
// as rdma-core 44's programs (recorded from Debian's build; the usage
// texts in testdata, for argv[0] without a directory).
func TestMainRefusals(t *testing.T) {
	for _, tc := range []struct {
		kind   Kind
		args   []string
		usage  bool
		stderr string
	}{
		{RC, []string{"-h"}, true, "ibv_rc_pingpong: invalid option -- 'h'\n"},
		{UD, []string{"-h"}, true, "ibv_ud_pingpong: invalid option -- 'h'\n"},
		{UC, []string{"-h"}, true, "ibv_uc_pingpong: invalid option -- 'h'\n"},
		{UC, []string{"--mtu"}, true, "ibv_uc_pingpong: option '--mtu' requires an argument\n"},
		{UC, []string{"-q", "300"}, true, "ibv_uc_pingpong: invalid option -- 'q'\n"},
		{UC, []string{"a", "b"}, true, ""},
		{UC, []string{"-m", "1000"}, true, ""},
		{UC, []string{"-i", "0"}, true, ""},
		{UC, []string{"-p", "70000"}, true, ""},
		{SRQ, []string{"-h"}, true, "ibv_srq_pingpong: invalid option -- 'h'\n"},
		{SRQ, []string{"-q"}, true, "ibv_srq_pingpong: option requires an argument -- 'q'\n"},
		{SRQ, []string{"--n"}, true, "ibv_srq_pingpong: option '--num-qp' requires an argument\n"},
		{SRQ, []string{"a", "b"}, true, ""},
		{SRQ, []string{"-s", "0"}, true, ""},
		{SRQ, []string{"-m", "1000"}, true, ""},
		{SRQ, []string{"-r", "3"}, false, "rx_depth 3 is too small for 16 QPs -- must have at least one receive per QP.\n"},
		{SRQ, []string{"-s", "-1", "-r", "3"}, false, "rx_depth 3 is too small for 16 QPs -- must have at least one receive per QP.\n"},
		{SRQ, []string{"-q", "-1"}, false, "rx_depth 500 is too small for -1 QPs -- must have at least one receive per QP.\n"},
		{SRQ, []string{"-q", "254", "-r", "253"}, false, "rx_depth 253 is too small for 254 QPs -- must have at least one receive per QP.\n"},
		{SRQ, []string{"--num=2", "-r", "1"}, false, "rx_depth 1 is too small for 2 QPs -- must have at least one receive per QP.\n"},
		{SRQ, []string{"-q", "300"}, false, "num_qp 300 must be less than 255\n"},
		{SRQ, []string{"-q", "0x100", "-r", "0x200"}, false, "num_qp 256 must be less than 255\n"},
	} {
		stdout, stderr, status := mainOutput(tc.kind, tc.args)
		want := ""
		if tc.usage {
			b, err := usageFiles.ReadFile("testdata/" + progs[tc.kind] + ".usage")
			if err != nil {
				t.Fatal(err)
			}
			want = string(b)
		}
		if stdout != want || stderr != tc.stderr || status != 1 {
			t.Errorf("%s %q: status %d, stderr %q, stdout:\n%s\nwant status 1, stderr %q, stdout:\n%s",
				progs[tc.kind], tc.args, status, stderr, stdout, tc.stderr, want)
		}
	}
}
