// Command ibv_srq_pingpong is a static drop-in for rdma-core's program of
// the same name: a ping-pong over several RC QPs (-q, default 16) that
// share one receive queue, with the same flags, the same out-of-band TCP
// exchange (256 address records each way) and the same output, so that
// either side may be rdma-core's. It runs on Soft-RoCE (rxe) through
// package uverbs' pure-Go data path; see cmd/internal/pingpong.
package main

import (
	"io"
	"os"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/pingpong"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Args[1:])) }

func run(stdout io.Writer, args []string) error {
	return pingpong.Main(stdout, "ibv_srq_pingpong", pingpong.SRQ, args)
}
