package cflags

import "strings"

// ArgMode says whether an option takes an argument (has_arg of struct
// option; a letter's colons in optstring).
type ArgMode int

// Argument modes.
const (
	NoArgument       ArgMode = iota // no_argument: "x"
	RequiredArgument                // required_argument: "x:"
	OptionalArgument                // optional_argument: "x::"
)

func (m ArgMode) String() string {
	switch m {
	case NoArgument:
		return "no_argument"
	case RequiredArgument:
		return "required_argument"
	case OptionalArgument:
		return "optional_argument"
	}
	return "invalid argument mode"
}

// LongOption is one entry of getopt_long's long-option table (struct
// option, without its flag pointer).
type LongOption struct {
	Name string  // without the leading "--"
	Arg  ArgMode // has_arg
	Val  rune    // what Opt returns for it: usually the short letter
}

// Error is a command-line error worded as glibc's getopt prints it on
// stderr ("prog: invalid option -- 'x'"), without the newline.
type Error struct {
	Prog string // argv[0]; "" leaves the "prog: " prefix off
	Msg  string // the rest: "invalid option -- 'x'"
	Opt  rune   // optopt: the short letter or long option's Val; 0 for an unknown or ambiguous long option
}

func (e *Error) Error() string {
	if e.Prog == "" {
		return e.Msg
	}
	return e.Prog + ": " + e.Msg
}

// Getopt is one getopt_long loop over a command line. Call Next until it
// returns false; after each true, Opt, Arg and Err describe the option
// found. Then Args holds the operands.
type Getopt struct {
	prog     string
	args     []string
	shorts   string // optstring without the ordering prefix
	longs    []LongOption
	inOrder  bool // '+': stop at the first operand (REQUIRE_ORDER)
	colon    bool // ':': a missing argument returns ':'
	next     int  // index in args of the next word to look at (optind-1)
	cluster  string
	operands []string
	done     bool

	opt     rune
	arg     string
	hasArg  bool
	longIdx int
	err     *Error
}

// New starts a getopt_long loop over args, the words after the program
// name, with the program's optstring and long-option table as its C
// source declares them. prog is the name error messages begin with
// (argv[0]). A nil longopts makes it getopt(3), without long options.
func New(prog string, args []string, optstring string, longopts []LongOption) *Getopt {
	g := &Getopt{prog: prog, args: args, longs: longopts, longIdx: -1}
	if strings.HasPrefix(optstring, "+") {
		g.inOrder, optstring = true, optstring[1:]
	}
	g.colon = strings.HasPrefix(optstring, ":")
	g.shorts = optstring
	return g
}

// Next finds the next option, reporting whether there was one; false at
// the end of the options. After an error (Err is not nil) the loop may
// go on, as a C program's may, with the next option.
func (g *Getopt) Next() bool {
	g.opt, g.arg, g.hasArg, g.longIdx, g.err = 0, "", false, -1, nil
	if g.done {
		return false
	}
	for g.cluster == "" {
		if g.next >= len(g.args) {
			g.done = true
			return false
		}
		a := g.args[g.next]
		switch {
		case a == "--":
			g.stop(g.next + 1)
			return false
		case len(a) < 2 || a[0] != '-':
			if g.inOrder {
				g.stop(g.next)
				return false
			}
			g.operands = append(g.operands, a)
			g.next++
		case a[1] == '-' && g.longs != nil:
			g.next++
			g.long(a[2:])
			return true
		default:
			g.next++
			g.cluster = a[1:]
		}
	}
	g.short()
	return true
}

// stop ends the options, the words from args[i] on being operands.
func (g *Getopt) stop(i int) {
	g.operands = append(g.operands, g.args[i:]...)
	g.next, g.done = len(g.args), true
}

// short takes the next letter of a group of short options.
func (g *Getopt) short() {
	c := g.cluster[0]
	g.cluster = g.cluster[1:]
	letter := string([]byte{c}) // glibc prints the byte as it is
	i := strings.IndexByte(g.shorts, c)
	if i < 0 || c == ':' || c == ';' {
		g.fail(rune(c), "invalid option -- '"+letter+"'")
		return
	}
	g.opt = rune(c)
	switch spec := g.shorts[i+1:]; {
	case strings.HasPrefix(spec, "::"):
		if g.cluster != "" {
			g.arg, g.hasArg, g.cluster = g.cluster, true, ""
		}
	case strings.HasPrefix(spec, ":"):
		switch {
		case g.cluster != "":
			g.arg, g.hasArg, g.cluster = g.cluster, true, ""
		case g.next < len(g.args):
			g.arg, g.hasArg = g.args[g.next], true
			g.next++
		default:
			g.failArg(rune(c), "option requires an argument -- '"+letter+"'")
		}
	}
}

// long takes a long option; s is the word after its "--".
func (g *Getopt) long(s string) {
	name, value, hasValue := strings.Cut(s, "=")
	found := -1
	for i, o := range g.longs {
		if o.Name == name {
			found = i
			break
		}
	}
	if found < 0 {
		// Not exact: a unique prefix, where entries with the same
		// argument mode and value count as one.
		var ambiguous []int
		for i, o := range g.longs {
			if !strings.HasPrefix(o.Name, name) {
				continue
			}
			if found < 0 {
				found = i
				continue
			}
			if f := g.longs[found]; o.Arg != f.Arg || o.Val != f.Val {
				if ambiguous == nil {
					ambiguous = append(ambiguous, found)
				}
				ambiguous = append(ambiguous, i)
			}
		}
		if ambiguous != nil {
			var b strings.Builder
			b.WriteString("option '--" + s + "' is ambiguous; possibilities:")
			for _, i := range ambiguous {
				b.WriteString(" '--" + g.longs[i].Name + "'")
			}
			g.fail(0, b.String())
			return
		}
	}
	if found < 0 {
		g.fail(0, "unrecognized option '--"+s+"'")
		return
	}
	o := g.longs[found]
	switch {
	case hasValue && o.Arg == NoArgument:
		g.fail(o.Val, "option '--"+o.Name+"' doesn't allow an argument")
		return
	case hasValue:
		g.arg, g.hasArg = value, true
	case o.Arg == RequiredArgument && g.next < len(g.args):
		g.arg, g.hasArg = g.args[g.next], true
		g.next++
	case o.Arg == RequiredArgument:
		g.failArg(o.Val, "option '--"+o.Name+"' requires an argument")
		return
	}
	g.opt, g.longIdx = o.Val, found
}

// fail makes the current option an error: Opt is '?'.
func (g *Getopt) fail(optopt rune, msg string) {
	g.opt, g.err = '?', &Error{Prog: g.prog, Msg: msg, Opt: optopt}
}

// failArg is fail for a missing argument, which a leading ':' in
// optstring makes ':'.
func (g *Getopt) failArg(optopt rune, msg string) {
	g.fail(optopt, msg)
	if g.colon {
		g.opt = ':'
	}
}

// Opt returns the option Next found: its short letter, or the Val of its
// long option; '?' for an error, or ':' for a missing argument when
// optstring begins with ':'.
func (g *Getopt) Opt() rune { return g.opt }

// Arg returns the option's argument (optarg), "" when it has none.
func (g *Getopt) Arg() string { return g.arg }

// HasArg reports whether the option came with an argument (optarg is
// not NULL); it tells an empty one from none for optional arguments.
func (g *Getopt) HasArg() bool { return g.hasArg }

// LongIndex returns the index in the long-option table of the long
// option Next found (getopt_long's *longindex); -1 for a short option or
// an error.
func (g *Getopt) LongIndex() int { return g.longIdx }

// Err returns the error Next found in place of an option, an *Error; nil
// when the option is valid. glibc prints its text on stderr (unless
// optstring begins with ':'); what the C program does next — usually
// print its usage and exit — is the caller's.
func (g *Getopt) Err() error {
	if g.err == nil {
		return nil
	}
	return g.err
}

// Args returns the operands: once Next has returned false, every word
// that is not an option or an option's argument, in order, as glibc
// leaves them at argv[optind:] after permuting; the words after "--"
// included. Before that, the operands seen so far.
func (g *Getopt) Args() []string { return g.operands }
