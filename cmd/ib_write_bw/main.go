// Command ib_write_bw is a static drop-in for perftest's program of the same
// name (RDMA WRITE bandwidth): the same flags, the same out-of-band exchange, so
// either end may be perftest's, the same result table and exit statuses.
// It runs over package uverbs' pure-Go data path; see
// cmd/internal/perftest.
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/perftest"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args)) }

// run is the program for argv (argv[0] is the name it reports itself
// by, as perftest uses its own argv[0]).
func run(stdout io.Writer, argv []string) error {
	return perftest.Command("ib_write_bw", stdout, os.Stderr, argv)
}
