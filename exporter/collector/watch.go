package collector

import (
	"context"
	"errors"
	"time"

	"github.com/rdmastack/rdmastack/nldev"
)

// events is a source of RDMA monitor events (*nldev.Monitor).
type events interface {
	Receive(ctx context.Context) ([]nldev.Event, error)
	Close() error
}

// watch counts RDMA monitor events until ctx ends and, after each, looks
// at the ports again so that a state change between two scrapes is
// counted. The kernel sends no event for a port's state itself (its
// events are about devices and their netdevs), so a change that comes
// and goes between two looks is not seen. On kernels before 6.12 there
// are no events: rdma_monitor_up says 0.
func (c *Collector) watch(ctx context.Context) {
	defer c.wg.Done()
	m, err := c.k.monitor()
	if err != nil {
		c.log.Info("no RDMA monitor events: port state changes are counted at scrapes only", "err", err)
		return
	}
	defer m.Close()
	c.setMonitorUp(true)
	defer c.setMonitorUp(false)
	for {
		evs, err := m.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.log.Warn("RDMA monitor events", "err", err)
			if errors.Is(err, nldev.ErrNoRDMA) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		c.mu.Lock()
		for _, ev := range evs {
			c.st.events[ev.Type]++
		}
		c.samplePorts()
		c.mu.Unlock()
	}
}

func (c *Collector) setMonitorUp(up bool) {
	c.mu.Lock()
	c.st.monitorUp = up
	c.mu.Unlock()
}

// samplePorts counts the port state changes since the last look.
func (c *Collector) samplePorts() {
	snap, err := c.k.devices()
	if err != nil {
		return
	}
	for _, d := range snap.Devices {
		ds := c.st.dev[d.Index]
		if ds == nil {
			continue // counted from its first scrape on
		}
		for _, p := range d.Ports {
			c.countChange(ds, p.Number, p.State)
		}
	}
}
