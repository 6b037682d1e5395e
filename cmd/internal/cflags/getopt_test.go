package cflags

import (
	"fmt"
	"strings"
	"testing"
)

// devinfoLongs and devinfoShorts are ibv_devinfo's options.
var devinfoLongs = []LongOption{
	{"ib-dev", RequiredArgument, 'd'}, {"ib-port", RequiredArgument, 'i'},
	{"list", NoArgument, 'l'}, {"verbose", NoArgument, 'v'},
}

const devinfoShorts = "d:i:lv"

// aliasLongs has an alias (alpha, alias), an optional argument (beta)
// and prefixes shared by entries that differ.
var aliasLongs = []LongOption{
	{"alpha", NoArgument, 'a'}, {"alias", NoArgument, 'a'}, {"beta", OptionalArgument, 'b'},
	{"bat", RequiredArgument, 'c'}, {"bad", NoArgument, 'x'},
}

// trace runs a whole loop and writes what a C program would see: each
// option as "c" or "c=arg" (long ones with their index, "c[2]"), errors
// as "?(optopt) message", and then the operands.
func trace(optstring string, longs []LongOption, args ...string) string {
	var out []string
	g := New("prog", args, optstring, longs)
	for g.Next() {
		if err := g.Err(); err != nil {
			e := err.(*Error)
			out = append(out, fmt.Sprintf("%c(%q) %s", g.Opt(), e.Opt, e))
			continue
		}
		s := string(g.Opt())
		if i := g.LongIndex(); i >= 0 {
			s += fmt.Sprintf("[%d]", i)
		}
		if g.HasArg() {
			s += "=" + g.Arg()
		}
		out = append(out, s)
	}
	return strings.Join(append(out, fmt.Sprintf("operands %q", g.Args())), "; ")
}

// TestGetopt: each case's trace was checked against glibc 2.36's
// getopt_long (Debian 12, the VM's C library) with the same optstring,
// table and words.
func TestGetopt(t *testing.T) {
	for _, tc := range []struct {
		optstring string
		longs     []LongOption
		args      []string
		want      string
	}{
		// Short options: groups, attached and separate arguments.
		{devinfoShorts, devinfoLongs, nil, `operands []`},
		{devinfoShorts, devinfoLongs, []string{"-lv", "-drxe0", "-i", "2"}, `l; v; d=rxe0; i=2; operands []`},
		{devinfoShorts, devinfoLongs, []string{"-vdrxe0"}, `v; d=rxe0; operands []`},
		{devinfoShorts, devinfoLongs, []string{"-vd", "rxe0"}, `v; d=rxe0; operands []`},
		{devinfoShorts, devinfoLongs, []string{"-d", "-v"}, `d=-v; operands []`}, // an argument may look like an option
		{devinfoShorts, devinfoLongs, []string{"-d", "--"}, `d=--; operands []`},
		{devinfoShorts, devinfoLongs, []string{"-d"}, `?('d') prog: option requires an argument -- 'd'; operands []`},
		{devinfoShorts, devinfoLongs, []string{"-vx", "-l"}, `v; ?('x') prog: invalid option -- 'x'; l; operands []`},
		{devinfoShorts, devinfoLongs, []string{"-:"}, `?(':') prog: invalid option -- ':'; operands []`},
		{devinfoShorts, devinfoLongs, []string{"-\xc3"}, "?('\u00c3') prog: invalid option -- '\xc3'; operands []"},
		{"ab::c:", aliasLongs, []string{"-b", "-bq", "x"}, `b; b=q; operands ["x"]`}, // optional: attached only
		// Long options: = or the next word, prefixes, aliases, errors.
		{devinfoShorts, devinfoLongs, []string{"--ib-dev=rxe0", "--ib-port", "1"}, `d[0]=rxe0; i[1]=1; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--ib-d=3", "--verb", "--l"}, `d[0]=3; v[3]; l[2]; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--ib-dev="}, `d[0]=; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--ib-dev"}, `?('d') prog: option '--ib-dev' requires an argument; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--ib"}, `?('\x00') prog: option '--ib' is ambiguous; possibilities: '--ib-dev' '--ib-port'; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--verbose=1"}, `?('v') prog: option '--verbose' doesn't allow an argument; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--list="}, `?('l') prog: option '--list' doesn't allow an argument; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--nope=2"}, `?('\x00') prog: unrecognized option '--nope=2'; operands []`},
		{devinfoShorts, devinfoLongs, []string{"--=z"}, `?('\x00') prog: option '--=z' is ambiguous; possibilities: '--ib-dev' '--ib-port' '--list' '--verbose'; operands []`},
		{"ab::c:", aliasLongs, []string{"--al", "--alias"}, `a[0]; a[1]; operands []`}, // same mode and value: an alias
		{"ab::c:", aliasLongs, []string{"--ba"}, `?('\x00') prog: option '--ba' is ambiguous; possibilities: '--bat' '--bad'; operands []`},
		{"ab::c:", aliasLongs, []string{"--b"}, `?('\x00') prog: option '--b' is ambiguous; possibilities: '--beta' '--bat' '--bad'; operands []`},
		{"ab::c:", aliasLongs, []string{"--=x"}, `?('\x00') prog: option '--=x' is ambiguous; possibilities: '--alpha' '--beta' '--bat' '--bad'; operands []`},
		{"ab::c:", aliasLongs, []string{"--beta", "x", "--beta=", "--beta=1"}, `b[2]; b[2]=; b[2]=1; operands ["x"]`},
		// Permutation, "--", "-" and "".
		{devinfoShorts, devinfoLongs, []string{"x", "-v", "y", "-d", "z", "w"}, `v; d=z; operands ["x" "y" "w"]`},
		{devinfoShorts, devinfoLongs, []string{"a", "-d", "--", "b", "--", "-l", "c"}, `d=--; operands ["a" "b" "-l" "c"]`},
		{devinfoShorts, devinfoLongs, []string{"-", "", "-v"}, `v; operands ["-" ""]`},
		// '+': stop at the first operand.
		{"+ab", nil, []string{"-a", "x", "-b"}, `a; operands ["x" "-b"]`},
		{"+ab", nil, []string{"-+"}, `?('+') prog: invalid option -- '+'; operands []`},
		// ':': a missing argument is ':'.
		{":d:v", devinfoLongs, []string{"-x", "-d"}, `?('x') prog: invalid option -- 'x'; :('d') prog: option requires an argument -- 'd'; operands []`},
		{":d:v", devinfoLongs, []string{"--ib-dev"}, `:('d') prog: option '--ib-dev' requires an argument; operands []`},
		// getopt without long options: "--ab" is '-', 'a', 'b'.
		{"ab", nil, []string{"--ab"}, `?('-') prog: invalid option -- '-'; a; b; operands []`},
	} {
		if got := trace(tc.optstring, tc.longs, tc.args...); got != tc.want {
			t.Errorf("getopt(%q, %q):\n got %s\nwant %s", tc.optstring, tc.args, got, tc.want)
		}
	}
}

// TestGetoptDone: after the end, Next stays false and leaves the
// caller's words alone.
func TestGetoptDone(t *testing.T) {
	args := []string{"x", "-v", "y"}
	g := New("prog", args, devinfoShorts, devinfoLongs)
	for g.Next() {
	}
	if g.Next() || g.Opt() != 0 || g.Err() != nil || len(g.Args()) != 2 {
		t.Errorf("after the end: Next true or state left: %c %v %q", g.Opt(), g.Err(), g.Args())
	}
	if args[0] != "x" || args[1] != "-v" || args[2] != "y" {
		t.Errorf("args changed to %q", args)
	}
}

func TestErrorPrefix(t *testing.T) {
	g := New("", []string{"-h"}, devinfoShorts, devinfoLongs)
	if !g.Next() || g.Err() == nil || g.Err().Error() != "invalid option -- 'h'" {
		t.Errorf("without a program name: %v", g.Err())
	}
}

func TestArgModeString(t *testing.T) {
	for m, want := range map[ArgMode]string{NoArgument: "no_argument", RequiredArgument: "required_argument",
		OptionalArgument: "optional_argument", 7: "invalid argument mode"} {
		if got := m.String(); got != want {
			t.Errorf("%d: %q, want %q", int(m), got, want)
		}
	}
}

// FuzzGetopt: no command line makes the loop panic or run on, and every
// word ends up once as an option, an argument or an operand.
func FuzzGetopt(f *testing.F) {
	f.Add("-vd\x00rxe0\x00--ib\x00--=\x00-\x00--\x00x")
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		g := New("prog", args, "d:i::lv", devinfoLongs)
		for n := 0; g.Next(); n++ {
			if n > len(s)+1 {
				t.Fatalf("%q: more options than bytes", args)
			}
		}
		if len(g.Args()) > len(args) {
			t.Fatalf("%q: operands %q", args, g.Args())
		}
	})
}
