package rping

import (
	"fmt"
	"io"
	"net/netip"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// rdma-core's limits and defaults (librdmacm/examples/rping.c, v44).
const (
	defaultPort = 7174
	defaultSize = 64
	minSize     = 23 // sizeof(stringify(INT_MAX)) + sizeof(RPING_MSG_FMT) as v44 computes it
	bufSize     = 64 * 1024
	einval      = 22
)

const usage = `rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]
rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]
	-c		client side
	-I		Source address to bind to for client.
	-s		server side.  To bind to any address with IPv6 use -a ::0
	-v		display ping data to stdout
	-V		validate ping data
	-d		debug printfs
	-S size 	ping data size
	-C count	ping count times
	-a addr		address
	-p port		port
	-P		persistent server mode allowing multiple connections
	-q		use self-created, self-modified QP
`

// config is a parsed command line.
type config struct {
	server     int // -1 until -s or -c
	addr       netip.Addr
	src        netip.Addr // -I; invalid when not given
	port       uint16
	count      int // 0: forever
	size       int
	verbose    bool
	validate   bool
	debug      bool
	persistent bool
	selfQP     bool
}

// parse reads the command line as rping's main does: getopt with
// opterr 0 (an unknown option prints only the usage), and the checks of
// -S and -C, which let parsing go on and fail at its end.
func parse(stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{server: -1, addr: netip.IPv4Unspecified(), port: defaultPort, size: defaultSize}
	g := cflags.New("rping", args, "a:I:Pp:C:S:t:scvVdq", nil)
	ret := 0
	debugf := func(format string, a ...any) {
		if c.debug {
			fmt.Fprintf(stdout, format, a...)
		}
	}
	lookup := func(s string) (netip.Addr, int) {
		a, err := cmnode.Lookup(s)
		if err != nil {
			le := err.(*cmnode.LookupError)
			fmt.Fprintf(stdout, "getaddrinfo failed (%s) - invalid hostname or IP address\n", le.Text)
			return netip.Addr{}, le.Code
		}
		return a, 0
	}
	for g.Next() {
		switch g.Opt() {
		case 'a':
			a, r := lookup(g.Arg())
			if ret = r; r == 0 {
				c.addr = a
			}
		case 'I':
			a, r := lookup(g.Arg())
			if ret = r; r == 0 {
				c.src = a
			}
		case 'P':
			c.persistent = true
		case 'p':
			c.port = uint16(cmnode.Atoi(g.Arg()))
			debugf("port %d\n", cmnode.Atoi(g.Arg()))
		case 's':
			c.server = 1
			debugf("server\n")
		case 'c':
			c.server = 0
			debugf("client\n")
		case 'S':
			c.size = cmnode.Atoi(g.Arg())
			if c.size < minSize || c.size > bufSize-1 {
				fmt.Fprintf(stderr, "Invalid size %d (valid range is %d to %d)\n", c.size, minSize, bufSize)
				ret = einval
			} else {
				debugf("size %d\n", c.size)
			}
		case 'C':
			c.count = cmnode.Atoi(g.Arg())
			if c.count < 0 {
				fmt.Fprintf(stderr, "Invalid count %d\n", c.count)
				ret = einval
			} else {
				debugf("count %d\n", c.count)
			}
		case 'v':
			c.verbose = true
			debugf("verbose\n")
		case 'V':
			c.validate = true
			debugf("validate data\n")
		case 'd':
			c.debug = true
		case 'q':
			c.selfQP = true
		default: // '?', and 't', which v44 lists but does not handle
			io.WriteString(stdout, usage)
			return nil, &cmnode.ExitError{Code: einval}
		}
	}
	if ret != 0 {
		return nil, &cmnode.ExitError{Code: ret}
	}
	if c.server == -1 {
		io.WriteString(stdout, usage)
		return nil, &cmnode.ExitError{Code: einval}
	}
	return c, nil
}
