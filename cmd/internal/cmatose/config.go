package cmatose

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmatest"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/rdma"
)

const usageFormat = cmatest.UsageHead + `	    tcp or ib
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
	cmatest.Flags // -s, -b, -f, -t, -c, -C, -S; -p is the port
	ps            rdma.PortSpace
	ackTimeout    uint8
	setTimeout    bool
	migrate       bool
}

// parse reads the command line as cmatose's main does; an unknown
// option prints glibc's complaint and the usage, and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{ps: rdma.PortSpaceTCP, Flags: cmatest.NewFlags("7471")}
	g := cflags.New(prog, args, "s:b:f:P:c:C:S:t:p:a:m", nil)
	for g.Next() {
		if c.Flags.Option(g.Opt(), g.Arg(), stderr) {
			continue
		}
		switch arg := g.Arg(); g.Opt() {
		case 'P':
			switch {
			case cflags.HasPrefixFold(arg, "ib"):
				c.ps = rdma.PortSpaceIB
			case !cflags.HasPrefixFold(arg, "tcp"):
				fmt.Fprintf(stderr, "Warning: unknown port space format\n")
			}
		case 'p':
			c.Hints.Port = arg
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
