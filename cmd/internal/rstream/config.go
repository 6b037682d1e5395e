package rstream

import (
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

const usage = rsock.UsageHead + `	[-k keepalive_time]
	[-T test_option]
	    s|sockets - use standard tcp/ip sockets
	    a|async - asynchronous operation (use poll)
	    b|blocking - use blocking calls
	    f|fork - fork server processing
	    n|nonblocking - use nonblocking calls
	    r|resolve - use rdma cm to resolve address
	    v|verify - verify data
`

// config is a parsed command line, with rstream.c's (v44) defaults.
type config struct {
	rsock.Common
	keepalive int // -k, seconds

	// -T: Modes, and sockets, fork and resolve (rdma_getaddrinfo).
	rsock.Modes
	sockets, fork, resolve bool
}

// parse reads the command line as rstream's main does: a bad option or
// -T argument prints the usage on stdout and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{Common: rsock.NewCommon(), Modes: rsock.Modes{Nonblocking: true}}
	err := c.Parse(prog, stdout, stderr, args, "s:b:f:B:i:I:C:S:p:k:T:", usage, func(opt rune, arg string) bool {
		switch opt {
		case 'k':
			c.keepalive = cmnode.Atoi(arg)
			return true
		case 'T':
			return c.testOption(arg)
		}
		return false
	})
	c.resolve = c.resolve || c.GID // -f gid is rdma_getaddrinfo's
	return c, err
}

// testOption is set_test_opt (rsock.TestOption) with rstream's
// letters: Modes' and s, f, r.
func (c *config) testOption(arg string) bool {
	l, ok := rsock.TestOption(arg, "sabfnrv")
	switch l {
	case 's':
		c.sockets = true
	case 'f':
		c.fork, c.sockets = true, true
	case 'r':
		c.resolve = true
	default:
		c.Modes.Set(l)
	}
	return ok
}
