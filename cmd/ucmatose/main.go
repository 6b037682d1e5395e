// Command ucmatose is a static drop-in for rdma-core's ucmatose
// (cmatose): RC connections over rdma_cm that exchange a number of
// messages each way, with the same options, connection protocol, output
// and exit statuses; see cmd/internal/cmatose.
//
// Usage:
//
//	ucmatose [-s server_address] [-b bind_address] [-c connections] [-C message_count] [-S message_size] [-p port_number]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmatose"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return cmatose.Main("ucmatose", stdout, os.Stderr, args)
}
