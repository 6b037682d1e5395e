// Package asyncwatch is the body of cmd/ibv_asyncwatch, a drop-in for
// rdma-core 44's ibv_asyncwatch (libibverbs/examples/asyncwatch.c): it
// opens one device's verbs context and prints every asynchronous event the
// kernel queues on it, one line each, with the same flags, text and exit
// statuses.
//
// Where rdma-core's program cannot end, ours does: a device whose driver
// cannot disassociate user contexts (rxe, siw) gives no event and no
// read error when it is removed, and the kernel's removal waits until
// every context is closed, so rdma-core's program waits forever and holds
// the removal up. Ours notices that the device is gone (package device's
// snapshot), closes its context so that the removal completes, and exits
// with status 1 and one line on stderr.
package asyncwatch

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
)

// Prog is the name the program gives itself in its usage text and
// getopt's complaints (rdma-core's prints argv[0] as typed).
const Prog = "ibv_asyncwatch"

// Config is one run's settings, as the flags give them.
type Config struct {
	// Dev is -d's device; without -d (ByName false) the first one. An
	// empty name (-d '') is a name like any other: no device has it.
	Dev    string
	ByName bool
	Help   bool // -h: print the usage and exit 0
}

// longs is rdma-core 44's long-option table, shorts its optstring.
var longs = []cflags.LongOption{
	{Name: "ib-dev", Arg: cflags.RequiredArgument, Val: 'd'},
	{Name: "help", Arg: cflags.NoArgument, Val: 'h'},
}

const shorts = "d:h"

// Parse reads the flags as rdma-core's program does: getopt_long with
// argument permutation, so operands are ignored wherever they are. The
// first -h ends the parse (Config.Help); a bad option is a *cflags.Error
// worded as glibc's getopt prints it, and ends it too.
func Parse(args []string) (*Config, error) {
	c := &Config{}
	g := cflags.New(Prog, args, shorts, longs)
	for g.Next() {
		switch g.Opt() {
		case 'd':
			c.Dev, c.ByName = g.Arg(), true
		case 'h':
			c.Help = true
			return c, nil
		default:
			return nil, g.Err()
		}
	}
	return c, nil
}

// Usage writes rdma-core 44's usage text, naming the program prog.
func Usage(w io.Writer, prog string) {
	fmt.Fprintf(w, "Usage:\n  %s            start an asyncwatch process\n\nOptions:\n"+
		"  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n"+
		"  -h, --help             print a help text and exit\n", prog)
}
