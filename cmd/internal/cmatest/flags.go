package cmatest

import (
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// UsageHead is how cmatose.c's and udaddy.c's usage begins (the options
// Flags reads, then -P's); each goes on with -P's values and its own.
const UsageHead = cmnode.UsageAddr + `	[-P port_space]
`

// Flags are the options cmatose.c and udaddy.c read alike: -s (client
// mode), -b, -f, -t and the counts -c, -C and -S.
type Flags struct {
	Dst, Src      string           // -s, -b
	Hints         cmnode.AddrHints // -f, and the port
	cmnode.Counts                  // -c, -C, -S
	TOS           uint8            // -t, when SetTOS
	SetTOS        bool
}

// NewFlags are the defaults, with port the service to listen on or
// connect to.
func NewFlags(port string) Flags {
	return Flags{Counts: cmnode.DefaultCounts(), Hints: cmnode.AddrHints{Port: port}}
}

// Option takes arg if opt is one of the options Flags reads, and
// reports whether it was; an unknown -f prints the C programs' warning
// on stderr.
func (f *Flags) Option(opt rune, arg string, stderr io.Writer) bool {
	if f.Counts.Option(opt, arg) {
		return true
	}
	switch opt {
	case 's':
		f.Dst = arg
	case 'b':
		f.Src = arg
	case 'f':
		f.Hints.SetFormat(arg, stderr)
	case 't':
		f.SetTOS, f.TOS = true, uint8(cflags.ULong(arg))
	default:
		return false
	}
	return true
}

// Client reports whether -s made this side the client.
func (f *Flags) Client() bool { return f.Dst != "" }
