// Command rcopy is a static drop-in for librdmacm's rcopy: copy a file
// to a server over rsockets, with the same command line, messages,
// output and exit statuses; see cmd/internal/rcopy.
//
// Usage:
//
//	rcopy [-p port_number]                                  (server)
//	rcopy source server[:destination] [-p port_number]      (client)
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rcopy"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return rcopy.Main("rcopy", stdout, os.Stderr, args)
}
