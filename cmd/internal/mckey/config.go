package mckey

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/rdma"
)

const usageFormat = `usage: %s
	-m multicast_address
	[-M unmapped_multicast_address]
	 replaces -m and requires -b
	[-s(ender)]
	[-b bind_address]
	[-c connections]
	[-C message_count]
	[-S message_size]
	[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]
	[-o join as a send-only full-member]
	[-l join without multicast loopback]
`

// config is a parsed command line, with mckey.c's (v44) defaults.
type config struct {
	dst, src      string // -m or -M, -b
	unmapped      bool   // -M: dst is a raw MGID (AF_IB)
	sender        bool   // -s
	sendOnly      bool   // -o
	noLoopback    bool   // -l
	ps            rdma.PortSpace
	cmnode.Counts // -c, -C, -S
}

// parse reads the command line as mckey's main does (getopt); an
// unknown option prints glibc's complaint and the usage, and exits 1, as
// does -M without -b.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{ps: rdma.PortSpaceUDP, Counts: cmnode.DefaultCounts()}
	g := cflags.New(prog, args, "m:M:sb:c:C:S:p:ol", nil)
	for g.Next() {
		if c.Counts.Option(g.Opt(), g.Arg()) {
			continue
		}
		switch arg := g.Arg(); g.Opt() {
		case 'm':
			c.dst = arg
		case 'M':
			c.unmapped, c.dst = true, arg
		case 's':
			c.sender = true
		case 'b':
			c.src = arg
		case 'p':
			c.ps = rdma.PortSpace(cflags.Long(arg))
		case 'o':
			c.sendOnly = true
		case 'l':
			c.noLoopback = true
		default:
			return nil, cmnode.UsageExit(stdout, stderr, g.Err(), usageFormat, prog)
		}
	}
	if c.unmapped && c.src == "" {
		fmt.Fprintf(stdout, "unmapped multicast address requires binding to source address\n")
		return nil, &cmnode.ExitError{Code: 1}
	}
	return c, nil
}
