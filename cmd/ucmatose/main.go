// Command ucmatose is a static drop-in for rdma-core's ucmatose
// (cmatose): RC connections over rdma_cm that exchange a number of
// messages each way, with the same options, connection protocol, output
// and exit statuses; see cmd/internal/cmatose.
//
// Usage:
//
//	ucmatose [-s server_address] [-b bind_address] [-f name|ip|ipv6|gid] [-P tcp|ib]
//	         [-c connections] [-C message_count] [-S message_size] [-t type_of_service]
//	         [-p port_number] [-m] [-a ack_timeout]
//
// -t and -a set the ids' TOS and ACK timeout options, -m moves every id
// to a new event channel before the disconnect. -f gid (AF_IB addresses)
// fails as a lookup error ("ai_family not supported"): AF_IB is not
// implemented.
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmatose"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	cmnode.KeepSpareP()
	return cmatose.Main("ucmatose", stdout, os.Stderr, args)
}
