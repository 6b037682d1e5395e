package rstream

import (
	"fmt"
	"io"
	"strings"

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
	[-k keepalive_time]
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
	dst, src   string // -s (client mode), -b
	numeric    bool   // -f ip
	gid        bool   // -f gid (AF_IB)
	buffer     int    // -B: SO_SNDBUF/SO_RCVBUF; 0 is rstream's 512 KiB
	inline     int    // -i
	iterations int    // -I
	count      int    // -C
	size       int    // -S
	custom     bool   // -I, -C or -S with a size: one test of those
	allSizes   bool   // -S all: every size of the table, not only powers of 16
	port       string // -p
	keepalive  int    // -k, seconds

	// -T: sockets, async (poll), fork, resolve (rdma_getaddrinfo), verify;
	// nonblocking is MSG_DONTWAIT, rstream's default, which b clears.
	sockets, async, fork, resolve, verify, nonblocking bool
}

// parse reads the command line as rstream's main does: a bad option or
// -T argument prints the usage on stdout and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{inline: 64, iterations: 1, count: 1000, size: 1000, port: "7471", nonblocking: true}
	g := cflags.New(prog, args, "s:b:f:B:i:I:C:S:p:k:T:", nil)
	for g.Next() {
		switch arg := g.Arg(); g.Opt() {
		case 's':
			c.dst = arg
		case 'b':
			c.src = arg
		case 'f':
			switch {
			case hasPrefixFold(arg, "ip"):
				c.numeric = true
			case hasPrefixFold(arg, "gid"):
				c.gid, c.resolve = true, true
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
			if hasPrefixFold(arg, "all") {
				c.allSizes = true
			} else {
				c.custom, c.size = true, cmnode.Atoi(arg)
			}
		case 'p':
			c.port = arg
		case 'k':
			c.keepalive = cmnode.Atoi(arg)
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
// with a word, case-insensitively, as strncasecmp(word, arg, len(word))
// matches ("sockets", "BLOCKING", "verify-me").
func (c *config) testOption(arg string) bool {
	if len(arg) == 1 {
		switch arg[0] {
		case 's':
			c.sockets = true
		case 'a':
			c.async = true
		case 'b':
			c.nonblocking = false
		case 'f':
			c.fork, c.sockets = true, true
		case 'n':
			c.nonblocking = true
		case 'r':
			c.resolve = true
		case 'v':
			c.verify = true
		default:
			return false
		}
		return true
	}
	switch {
	case hasPrefixFold(arg, "socket"):
		c.sockets = true
	case hasPrefixFold(arg, "async"):
		c.async = true
	case hasPrefixFold(arg, "block"):
		c.nonblocking = false
	case hasPrefixFold(arg, "nonblock"):
		c.nonblocking = true
	case hasPrefixFold(arg, "resolve"):
		c.resolve = true
	case hasPrefixFold(arg, "verify"):
		c.verify = true
	case hasPrefixFold(arg, "fork"):
		c.fork, c.sockets = true, true
	default:
		return false
	}
	return true
}

// hasPrefixFold is strncasecmp(word, s, len(word)) == 0.
func hasPrefixFold(s, word string) bool {
	return len(s) >= len(word) && strings.EqualFold(s[:len(word)], word)
}
