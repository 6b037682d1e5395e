package cmtime

import (
	"io"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

const usageFormat = `usage: %s
	[-s server_address]
	[-b bind_address]
	[-c connections]
	[-p port_number]
	[-r retries]
	[-t timeout_ms]
`

// config is a parsed command line, with cmtime.c's (v44) defaults.
type config struct {
	dst, src    string           // -s (client mode), -b
	hints       cmnode.AddrHints // the port (-p)
	connections int              // -c
	retries     int              // -r: resolution retries, and the connection's retry_count
	timeout     int              // -t: resolution timeout in ms
}

// parse reads the command line as cmtime's main does: getopt
// "s:b:c:p:r:t:", numbers by atoi; anything else prints glibc's
// complaint and the usage, and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{hints: cmnode.AddrHints{Port: "7471"}, connections: 100, retries: 2, timeout: 2000}
	g := cflags.New(prog, args, "s:b:c:p:r:t:", nil)
	for g.Next() {
		switch arg := g.Arg(); g.Opt() {
		case 's':
			c.dst = arg
		case 'b':
			c.src = arg
		case 'c':
			c.connections = cmnode.Atoi(arg)
		case 'p':
			c.hints.Port = arg
		case 'r':
			c.retries = cmnode.Atoi(arg)
		case 't':
			c.timeout = cmnode.Atoi(arg)
		default:
			return nil, cmnode.UsageExit(stdout, stderr, g.Err(), usageFormat, prog)
		}
	}
	return c, nil
}

// resolveTimeout is -t as the kernel gets it: C passes its int as the
// command's u32, so a negative one is more than 24 days, which is the
// most package rdma takes; 0, which the kernel takes as already
// expired (a local address still resolves), becomes rdma's least, 1 ms.
func (c *config) resolveTimeout() time.Duration {
	switch {
	case c.timeout == 0:
		return time.Millisecond
	case c.timeout < 0:
		return (1 << 31) * time.Millisecond
	}
	return time.Duration(c.timeout) * time.Millisecond
}
