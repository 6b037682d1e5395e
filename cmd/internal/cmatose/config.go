package cmatose

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/rdma"
)

const usageFormat = `usage: %s
	[-s server_address]
	[-b bind_address]
	[-f address_format]
	    name, ip, ipv6, or gid
	[-P port_space]
	    tcp or ib
	[-c connections]
	[-C message_count]
	[-S message_size]
	[-t type_of_service]
	[-p port_number]
	[-m(igrate)]
	[-a ack_timeout]
`

// config is a parsed command line, with cmatose.c's (v44) defaults.
type config struct {
	dst, src    string // -s (client mode), -b
	numeric     bool   // -f ip, ipv6
	gid         bool   // -f gid (AF_IB)
	ps          rdma.PortSpace
	connections int
	count       int
	size        int
	port        string
	tos         uint8
	setTOS      bool
	ackTimeout  uint8
	setTimeout  bool
	migrate     bool
}

// parse reads the command line as cmatose's main does; an unknown
// option prints glibc's complaint and the usage, and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{ps: rdma.PortSpaceTCP, connections: 1, count: 10, size: 100, port: "7471"}
	g := cflags.New(prog, args, "s:b:f:P:c:C:S:t:p:a:m", nil)
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
				c.numeric, c.gid = true, true
			case !hasPrefixFold(arg, "name"):
				fmt.Fprintf(stderr, "Warning: unknown address format\n")
			}
		case 'P':
			switch {
			case hasPrefixFold(arg, "ib"):
				c.ps = rdma.PortSpaceIB
			case !hasPrefixFold(arg, "tcp"):
				fmt.Fprintf(stderr, "Warning: unknown port space format\n")
			}
		case 'c':
			c.connections = cmnode.Atoi(arg)
		case 'C':
			c.count = cmnode.Atoi(arg)
		case 'S':
			c.size = cmnode.Atoi(arg)
		case 't':
			c.setTOS, c.tos = true, uint8(cflags.ULong(arg))
		case 'p':
			c.port = arg
		case 'a':
			c.setTimeout, c.ackTimeout = true, uint8(cflags.ULong(arg))
		case 'm':
			c.migrate = true
		default:
			fmt.Fprintln(stderr, g.Err())
			fmt.Fprintf(stdout, usageFormat, prog)
			return nil, &cmnode.ExitError{Code: 1}
		}
	}
	return c, nil
}

// hasPrefixFold is strncasecmp(word, s, len(word)) == 0.
func hasPrefixFold(s, word string) bool {
	return len(s) >= len(word) && strings.EqualFold(s[:len(word)], word)
}
