package cmatose

import (
	"fmt"
	"io"

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
	dst, src      string           // -s (client mode), -b
	hints         cmnode.AddrHints // -f, and the port (-p on ucmatose)
	ps            rdma.PortSpace
	cmnode.Counts // -c, -C, -S
	tos           uint8
	setTOS        bool
	ackTimeout    uint8
	setTimeout    bool
	migrate       bool
}

// parse reads the command line as cmatose's main does; an unknown
// option prints glibc's complaint and the usage, and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{ps: rdma.PortSpaceTCP, Counts: cmnode.DefaultCounts(), hints: cmnode.AddrHints{Port: "7471"}}
	g := cflags.New(prog, args, "s:b:f:P:c:C:S:t:p:a:m", nil)
	for g.Next() {
		if c.Counts.Option(g.Opt(), g.Arg()) {
			continue
		}
		switch arg := g.Arg(); g.Opt() {
		case 's':
			c.dst = arg
		case 'b':
			c.src = arg
		case 'f':
			c.hints.SetFormat(arg, stderr)
		case 'P':
			switch {
			case cflags.HasPrefixFold(arg, "ib"):
				c.ps = rdma.PortSpaceIB
			case !cflags.HasPrefixFold(arg, "tcp"):
				fmt.Fprintf(stderr, "Warning: unknown port space format\n")
			}
		case 't':
			c.setTOS, c.tos = true, uint8(cflags.ULong(arg))
		case 'p':
			c.hints.Port = arg
		case 'a':
			c.setTimeout, c.ackTimeout = true, uint8(cflags.ULong(arg))
		case 'm':
			c.migrate = true
		default:
			return nil, cmnode.UsageExit(stdout, stderr, g.Err(), usageFormat, prog)
		}
	}
	return c, nil
}
