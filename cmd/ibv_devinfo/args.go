package main

import (
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
)

// longOptions is rdma-core's long-option table, with optstring "d:i:lv".
var longOptions = []cflags.LongOption{
	{Name: "ib-dev", Arg: cflags.RequiredArgument, Val: 'd'},
	{Name: "ib-port", Arg: cflags.RequiredArgument, Val: 'i'},
	{Name: "list", Arg: cflags.NoArgument, Val: 'l'},
	{Name: "verbose", Arg: cflags.NoArgument, Val: 'v'},
}

// parseArgs reads the options as rdma-core's ibv_devinfo does with
// getopt_long; operands are ignored. On a bad option it prints the usage
// text and returns rdma-core's exit status, with glibc's complaint as the
// message for stderr. As in rdma-core, -l acts as soon as it is seen.
func parseArgs(stdout io.Writer, args []string) (*options, error) {
	o := &options{}
	g := cflags.New("ibv_devinfo", args, "d:i:lv", longOptions)
	for g.Next() {
		switch g.Opt() {
		case 'd':
			o.dev = g.Arg()
		case 'i':
			o.port = int(int32(cflags.Long(g.Arg()))) // ib_port is an int
			if o.port <= 0 {
				io.WriteString(stdout, usage)
				return nil, &exitError{code: 1} // rdma-core returns 1 here, -1 elsewhere
			}
		case 'v':
			o.verbose = true
		case 'l':
			o.list = true
			return o, nil
		default:
			io.WriteString(stdout, usage)
			return nil, &exitError{msg: g.Err().Error(), code: 255}
		}
	}
	return o, nil
}
