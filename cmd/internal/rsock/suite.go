package rsock

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// Common holds the options rstream and riostream share (their getopt
// strings less -k and -T), with the C programs' (v44) defaults from
// NewCommon.
type Common struct {
	Dst, Src   string // -s (client mode), -b
	Numeric    bool   // -f ip
	GID        bool   // -f gid (AF_IB)
	Buffer     int    // -B: SO_SNDBUF/SO_RCVBUF; 0 is the programs' 512 KiB
	Inline     int    // -i: RDMA_INLINE of the latency table
	Iterations int    // -I
	Count      int    // -C
	Size       int    // -S
	Custom     bool   // -I, -C or -S with a size: one test of those
	AllSizes   bool   // -S all: every size of the table, not only powers of 16
	Port       string // -p
}

// NewCommon is the options' defaults.
func NewCommon() Common {
	return Common{Inline: 64, Iterations: 1, Count: 1000, Size: 1000, Port: "7471"}
}

// Set takes option opt with its argument when it is a shared one, as
// the programs' main does, and reports whether it was.
func (c *Common) Set(opt rune, arg string, stderr io.Writer) bool {
	switch opt {
	case 's':
		c.Dst = arg
	case 'b':
		c.Src = arg
	case 'f':
		switch {
		case cflags.HasPrefixFold(arg, "ip"):
			c.Numeric = true
		case cflags.HasPrefixFold(arg, "gid"):
			c.GID = true
		default:
			fmt.Fprintf(stderr, "Warning: unknown address format\n")
		}
	case 'B':
		c.Buffer = cmnode.Atoi(arg)
	case 'i':
		c.Inline = cmnode.Atoi(arg)
	case 'I':
		c.Custom, c.Iterations = true, cmnode.Atoi(arg)
	case 'C':
		c.Custom, c.Count = true, cmnode.Atoi(arg)
	case 'S':
		if cflags.HasPrefixFold(arg, "all") {
			c.AllSizes = true
		} else {
			c.Custom, c.Size = true, cmnode.Atoi(arg)
		}
	case 'p':
		c.Port = arg
	default:
		return false
	}
	return true
}

// UsageHead is how rstream's and riostream's usage begins: the lines of
// the options Common reads; each goes on with its own.
const UsageHead = cmnode.UsageAddr + `	[-B buffer_size]
	[-i inline_size]
	[-I iterations]
	[-C transfer_count]
	[-S transfer_size or all]
	[-p port_number]
`

// Parse reads a command line as the programs' main does: getopt with
// optstring, the shared options into c (Set), the program's own through
// own, which reports whether it took the option. A bad option, or one
// own refuses (a bad -T), prints the usage on stdout (after getopt's
// complaint on stderr, if any) and ends the program with status 1.
func (c *Common) Parse(prog string, stdout, stderr io.Writer, args []string, optstring, usage string, own func(opt rune, arg string) bool) error {
	g := cflags.New(prog, args, optstring, nil)
	for g.Next() {
		if !c.Set(g.Opt(), g.Arg(), stderr) && !own(g.Opt(), g.Arg()) {
			return cmnode.UsageExit(stdout, stderr, g.Err(), usage, prog)
		}
	}
	return nil
}

// Tests is what run() does once the server listens: the table's
// header, then one custom test, or the latency and the bandwidth tables
// (the sizes of option 0, or all with -S all), each table on a
// connection of its own. connect is client_connect or server_connect
// with RDMA_INLINE inline (-1 leaves rsockets' default, as the custom
// test does), test is run_test and done closes the connection; count is
// size_to_count. It returns run()'s value: the custom test's, or 0 (a
// failed table test is skipped), or the failed connect's.
func (c *Common) Tests(stdout io.Writer, count func(int) int, connect func(inline int) int, test func(Result) int, done func()) int {
	fmt.Fprint(stdout, Header)
	if c.Custom {
		if code := connect(-1); code != 0 {
			return code
		}
		code := test(Result{Name: "custom", Size: c.Size, Count: c.Count, Iters: c.Iterations})
		done()
		return code
	}
	for _, k := range []struct {
		inline int
		test   func(size int) Result
	}{
		{c.Inline, func(size int) Result {
			return Result{Name: TestName(size, "_lat"), Size: size, Count: 1, Iters: count(size)}
		}},
		{0, func(size int) Result {
			return Result{Name: TestName(size, "_bw"), Size: size, Count: count(size), Iters: 1}
		}},
	} {
		if code := connect(k.inline); code != 0 {
			return code
		}
		for _, ts := range TestSizes {
			if ts.Option == 0 || c.AllSizes {
				test(k.test(ts.Size))
			}
		}
		done()
	}
	return 0
}

// Modes are the -T modes both programs have: a|async (poll before each
// call), b|blocking and n|nonblocking (MSG_DONTWAIT, the default), and
// v|verify (format_buf and verify_buf).
type Modes struct {
	Async, Verify, Nonblocking bool
}

// Set takes the mode of letter l (TestOption's) and reports whether it
// is one of Modes'.
func (m *Modes) Set(l byte) bool {
	switch l {
	case 'a':
		m.Async = true
	case 'b':
		m.Nonblocking = false
	case 'n':
		m.Nonblocking = true
	case 'v':
		m.Verify = true
	default:
		return false
	}
	return true
}

// testWords are the -T words of set_test_opt, each standing for its
// letter.
var testWords = []struct {
	word   string
	letter byte
}{
	{"socket", 's'}, {"async", 'a'}, {"block", 'b'}, {"nonblock", 'n'}, {"resolve", 'r'}, {"verify", 'v'}, {"fork", 'f'},
}

// TestOption is set_test_opt's reading of a -T argument: one letter,
// or an argument that starts with a word, case-insensitively, as
// strncasecmp(word, arg, len(word)) matches ("sockets", "BLOCKING",
// "verify-me"). It returns the letter when it is one of the program's
// letters.
func TestOption(arg, letters string) (byte, bool) {
	var l byte
	if len(arg) == 1 {
		l = arg[0]
	} else {
		for _, w := range testWords {
			if cflags.HasPrefixFold(arg, w.word) {
				l = w.letter
				break
			}
		}
	}
	if l == 0 || !strings.ContainsRune(letters, rune(l)) {
		return 0, false
	}
	return l, true
}
