// Command rdma_server is a static drop-in for rdma-core's rdma_server:
// it takes one RC connection made with the synchronous endpoint calls,
// receives 16 bytes and answers with 16, printing "rdma_server: start"
// and "rdma_server: end <status>"; see cmd/internal/rdmaep.
//
// Usage:
//
//	rdma_server [-s server_address] [-p port_number]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rdmaep"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return rdmaep.ServerMain(stdout, os.Stderr, args)
}
