// Command rdma_exporter serves Prometheus metrics for every RDMA device,
// port, hardware counter and resource of the host (or of its network
// namespace), read from RDMA netlink, sysfs and the verbs interface
// directly: no rdma-core, no cgo, one static binary.
//
//	rdma_exporter [--web.listen-address=:9315] [--web.config.file=FILE]
//	              [--collector.optional=NAME,...] [--collector.qp-counters]
//	              [--compat.node-exporter] [--log.level=info]
//
// The metrics are listed in the exporter's README. --web.config.file takes
// the exporter-toolkit's web configuration (TLS, basic auth), as every
// Prometheus exporter does.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rdma_exporter:", err)
		os.Exit(1)
	}
}

// run is the whole command; main only reports its error.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := parseFlags(args, stdout)
	if err != nil || cfg == nil {
		return err
	}
	return serve(ctx, cfg, stderr)
}
