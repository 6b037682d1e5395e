// Command mckey is a static drop-in for rdma-core's mckey: UD ids join
// a multicast group over rdma_cm and a sender sends a number of
// datagrams to it that receivers wait for, with the same options,
// output and exit statuses; see cmd/internal/mckey.
//
// Usage:
//
//	mckey -m multicast_address [-M unmapped_multicast_address] [-s] [-b bind_address]
//	      [-c connections] [-C message_count] [-S message_size] [-p port_space] [-o] [-l]
//
// -M (AF_IB groups) and -l (no multicast loopback, a QP create flag) are
// not implemented: they fail as a join or QP creation error.
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/mckey"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return mckey.Main("mckey", stdout, os.Stderr, args)
}
