// Command ibv_asyncwatch is a static drop-in for rdma-core's program of
// the same name: it prints the asynchronous events (port up and down,
// GID and LID changes, a fatal device error) of one RDMA device, with the
// same flags, output and exit statuses. See cmd/internal/asyncwatch.
package main

import (
	"context"
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/asyncwatch"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return asyncwatch.Main(context.Background(), stdout, args)
}
