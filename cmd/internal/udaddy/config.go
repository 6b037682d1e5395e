package udaddy

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmatest"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/rdma"
)

const usageFormat = cmatest.UsageHead + `	    udp or ipoib
	[-c connections]
	[-C message_count]
	[-S message_size]
	[-t type_of_service]
	[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]
`

// port is udaddy's service: fixed, -p is the port space.
const port = "7174"

// config is a parsed command line, with udaddy.c's (v44) defaults.
type config struct {
	cmatest.Flags // -s, -b, -f, -t, -c, -C, -S; the port is fixed
	ps            rdma.PortSpace
}

// parse reads the command line as udaddy's main does (getopt); an
// unknown option prints glibc's complaint and the usage, and exits 1.
func parse(prog string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{ps: rdma.PortSpaceUDP, Flags: cmatest.NewFlags(port)}
	g := cflags.New(prog, args, "s:b:c:C:S:t:p:P:f:", nil)
	for g.Next() {
		if c.Flags.Option(g.Opt(), g.Arg(), stderr) {
			continue
		}
		switch arg := g.Arg(); g.Opt() {
		case 'p': // backwards compatibility: the port space as a number
			c.ps = rdma.PortSpace(cflags.Long(arg))
		case 'P':
			switch {
			case cflags.HasPrefixFold(arg, "ipoib"):
				c.ps = rdma.PortSpaceIPoIB
			case !cflags.HasPrefixFold(arg, "udp"):
				fmt.Fprintf(stderr, "Warning: unknown port space format\n")
			}
		default:
			return nil, cmnode.UsageExit(stdout, stderr, g.Err(), usageFormat, prog)
		}
	}
	return c, nil
}
