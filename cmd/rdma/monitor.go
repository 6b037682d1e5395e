package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rdmastack/rdmastack/nldev"
)

const monitorUsage = `Usage: rdma monitor
`

// cmdMonitor is "rdma monitor": it prints events until interrupted.
func cmdMonitor(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "monitor command", func(stdout io.Writer, o options, _ []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return monitor(ctx, stdout, o, nil)
	}, help(monitorUsage))
}

// monitor prints events as they come until ctx ends. ready, when set, is
// closed once the subscription is in place.
func monitor(ctx context.Context, stdout io.Writer, o options, ready chan<- struct{}) error {
	m, err := nldev.DialMonitor()
	if err != nil {
		if errors.Is(err, nldev.ErrNotSupported) {
			return fmt.Errorf("RDMA monitoring is not supported by the kernel (%w)", err)
		}
		return err
	}
	defer m.Close()
	if ready != nil {
		close(ready)
	}
	// JSON streams one array whose objects appear as the events do.
	first := true
	if o.json {
		if _, err := io.WriteString(stdout, "["); err != nil {
			return err
		}
		defer io.WriteString(stdout, "]\n")
	}
	for {
		evs, err := m.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		for _, ev := range evs {
			p := newPrinter(stdout, o)
			printEvent(p, ev)
			if !o.json {
				if err := p.end(); err != nil {
					return err
				}
				continue
			}
			if !first {
				io.WriteString(stdout, ",")
			}
			first = false
			if err := p.end(); err != nil {
				return err
			}
			if err := p.writeObjects(); err != nil {
				return err
			}
		}
	}
}

// printEvent prints one event as iproute2's monitor does.
func printEvent(p *printer, ev nldev.Event) {
	p.str("event_type", "%s\t", "["+ev.Type.String()+"]")
	if ev.HasDev {
		p.uint("rdma_index", "dev %d", uint64(ev.DevIndex))
	}
	if ev.DevName != "" {
		p.str("rdma_dev", " %s", ev.DevName)
	}
	if ev.HasPort {
		p.uint("port", " port %d", uint64(ev.Port))
	}
	if ev.HasNetdevIndex {
		p.uint("netdev_idx", " netdev %d", uint64(ev.NetdevIndex))
	}
	if ev.HasNetdev {
		p.str("netdev_name", " %s", ev.Netdev)
	}
}
