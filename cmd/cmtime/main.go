// Command cmtime is a static drop-in for rdma-core's cmtime (v44): a
// client that times each step of setting up and tearing down RC
// connections over rdma_cm (create id, bind, resolve address and route,
// create QP, connect, disconnect, destroy), each step issued for every
// connection and then waited for as a batch, and a server that accepts
// and disconnects them until killed. Same options, output, table and
// exit statuses; see cmd/internal/cmtime (which also says why -b with
// an address of another netdev than the server's times out on rxe, as
// rdma-core's does).
//
// Usage:
//
//	cmtime [-s server_address] [-b bind_address] [-c connections]
//	       [-p port_number] [-r retries] [-t timeout_ms]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/cmtime"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	cmnode.KeepSpareP()
	return cmtime.Main("cmtime", stdout, os.Stderr, args)
}
