package riostream

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

const usage = `usage: %s
	[-s server_address]
	[-b bind_address]
	[-f address_format]
	    name, ip, ipv6, or gid
	[-B buffer_size]
	[-i inline_size]
	[-I iterations]
	[-C transfer_count]
	[-S transfer_size or all]
	[-p port_number]
	[-T test_option]
	    a|async - asynchronous operation (use poll)
	    b|blocking - use blocking calls
	    n|nonblocking - use nonblocking calls
	    v|verify - verify data
`

// config is a parsed command line, with riostream.c's (v44) defaults.
type config struct {
	dst, src   string // -s (client mode), -b (the server's listening address)
	numeric    bool   // -f ip
	gid        bool   // -f gid (AF_IB)
	buffer     int    // -B: SO_SNDBUF/SO_RCVBUF; 0 is riostream's 512 KiB
	inline     int    // -i: RDMA_INLINE of the latency tests
	iterations int    // -I
	count      int    // -C
	size       int    // -S
	custom     bool   // -I, -C or -S with a size: one test of those
	allSizes   bool   // -S all
	port       string // -p

	// -T: async (poll) and verify; nonblocking is MSG_DONTWAIT,
	// riostream's default, which b clears.
	async, verify, nonblocking bool
}

// parse reads the command line as riostream's main does: a bad option
// or -T argument prints the usage on stdout and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{inline: 64, iterations: 1, count: 1000, size: 1000, port: "7471", nonblocking: true}
	g := cflags.New(prog, args, "s:b:f:B:i:I:C:S:p:T:", nil)
	for g.Next() {
		switch arg := g.Arg(); g.Opt() {
		case 's':
			c.dst = arg
		case 'b':
			c.src = arg
		case 'f':
			switch {
			case cflags.HasPrefixFold(arg, "ip"):
				c.numeric = true
			case cflags.HasPrefixFold(arg, "gid"):
				c.gid = true
			default:
				fmt.Fprintf(stderr, "Warning: unknown address format\n")
			}
		case 'B':
			c.buffer = cmnode.Atoi(arg)
		case 'i':
			c.inline = cmnode.Atoi(arg)
		case 'I':
			c.custom, c.iterations = true, cmnode.Atoi(arg)
		case 'C':
			c.custom, c.count = true, cmnode.Atoi(arg)
		case 'S':
			if cflags.HasPrefixFold(arg, "all") {
				c.allSizes = true
			} else {
				c.custom, c.size = true, cmnode.Atoi(arg)
			}
		case 'p':
			c.port = arg
		case 'T':
			if c.testOption(arg) {
				break
			}
			return nil, cmnode.UsageExit(stdout, stderr, nil, usage, prog)
		default:
			return nil, cmnode.UsageExit(stdout, stderr, g.Err(), usage, prog)
		}
	}
	return c, nil
}

// testOption is set_test_opt: one letter, or an argument that starts
// with a word, case-insensitively ("async", "BLOCKING", "verify-me").
func (c *config) testOption(arg string) bool {
	if len(arg) == 1 {
		switch arg[0] {
		case 'a':
			c.async = true
		case 'b':
			c.nonblocking = false
		case 'n':
			c.nonblocking = true
		case 'v':
			c.verify = true
		default:
			return false
		}
		return true
	}
	switch {
	case cflags.HasPrefixFold(arg, "async"):
		c.async = true
	case cflags.HasPrefixFold(arg, "block"):
		c.nonblocking = false
	case cflags.HasPrefixFold(arg, "nonblock"):
		c.nonblocking = true
	case cflags.HasPrefixFold(arg, "verify"):
		c.verify = true
	default:
		return false
	}
	return true
}
