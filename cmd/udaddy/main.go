// Command udaddy is a static drop-in for rdma-core's udaddy: UD
// endpoints that find each other over rdma_cm (SIDR, port 7174) and
// exchange a number of datagrams each way, with the same options,
// protocol, output and exit statuses; see cmd/internal/udaddy.
//
// Usage:
//
//	udaddy [-s server_address] [-b bind_address] [-f name|ip|ipv6|gid] [-P udp|ipoib]
//	       [-c connections] [-C message_count] [-S message_size] [-t type_of_service]
//	       [-p port_space]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/udaddy"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return udaddy.Main("udaddy", stdout, os.Stderr, args)
}
