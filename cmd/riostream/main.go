// Command riostream is a static drop-in for librdmacm's riostream: a
// latency and bandwidth benchmark of rsockets' iomap (riomap, riowrite)
// with the same options, wire exchange, table and exit statuses; see
// cmd/internal/riostream.
//
// Usage:
//
//	riostream [-s server_address] [-b bind_address] [-f address_format] [-B buffer_size] [-i inline_size] [-I iterations] [-C transfer_count] [-S transfer_size|all] [-p port_number] [-T test_option]
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/riostream"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	cmnode.KeepSpareP()
	return riostream.Main("riostream", stdout, os.Stderr, args)
}
