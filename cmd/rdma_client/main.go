// Command rdma_client is a static drop-in for rdma-core's rdma_client:
// it connects to an rdma_server (127.0.0.1 unless -s) with the
// synchronous endpoint calls, sends 16 bytes and receives 16, printing
// "rdma_client: start" and "rdma_client: end <status>"; see
// cmd/internal/rdmaep.
//
// Usage:
//
//	rdma_client [-s server_address] [-p port_number]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rdmaep"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return rdmaep.ClientMain(stdout, os.Stderr, args)
}
