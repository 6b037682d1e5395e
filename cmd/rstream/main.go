// Command rstream is a static drop-in for librdmacm's rstream: a stream
// socket latency and bandwidth benchmark over rsockets (or, with -T s,
// TCP), with the same options, wire exchange, table and exit statuses;
// see cmd/internal/rstream.
//
// Usage:
//
//	rstream [-s server_address] [-b bind_address] [-B buffer_size] [-I iterations] [-C transfer_count] [-S transfer_size|all] [-p port_number] [-k keepalive_time] [-T test_option]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rstream"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	cmnode.KeepSpareP()
	return rstream.Main("rstream", stdout, os.Stderr, args)
}
