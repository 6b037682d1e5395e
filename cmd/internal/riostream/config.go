package riostream

import (
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

const usage = rsock.UsageHead + `	[-T test_option]
	    a|async - asynchronous operation (use poll)
	    b|blocking - use blocking calls
	    n|nonblocking - use nonblocking calls
	    v|verify - verify data
`

// config is a parsed command line, with riostream.c's (v44) defaults.
type config struct {
	rsock.Common
	rsock.Modes // -T
}

// parse reads the command line as riostream's main does: a bad option
// or -T argument prints the usage on stdout and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{Common: rsock.NewCommon(), Modes: rsock.Modes{Nonblocking: true}}
	err := c.Parse(prog, stdout, stderr, args, "s:b:f:B:i:I:C:S:p:T:", usage, func(opt rune, arg string) bool {
		l, ok := rsock.TestOption(arg, "abnv")
		return opt == 'T' && ok && c.Modes.Set(l)
	})
	return c, err
}
