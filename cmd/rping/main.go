// Command rping is a static drop-in for rdma-core's rping: an RC
// ping-pong over rdma_cm in which the server RDMA-READs the client's
// ping buffer and RDMA-WRITEs it back, with the same options, wire
// protocol, output and exit statuses; see cmd/internal/rping.
//
// Usage:
//
//	rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]
//	rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rping"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error { return rping.Main(stdout, os.Stderr, args) }
