package device

import (
	"fmt"
	"slices"

	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/nldev"
)

// lister turns the process's snapshot (internal/devcache, which package
// rdma's device list shares) into this package's model: a new generation
// is joined with sysfs (each device's parent and directory) once, and
// within a generation only the ports are brought up to date.
type lister struct {
	c    *devcache.Cache
	fs   sysFS
	gen  uint64    // the generation of last; read and written under c's lock
	last *Snapshot // nil: none yet
}

var global = &lister{c: devcache.Global, fs: system}

// List returns a snapshot of every RDMA device visible in the caller's
// network namespace. A kernel without RDMA gives an error matching
// nldev.ErrNoRDMA; no devices at all is an empty snapshot. The snapshot is
// the caller's to keep and change.
//
// The first List in a namespace asks RDMA netlink and sysfs for
// everything. Later ones answer from the last snapshot for as long as the
// kernel's events say nothing changed: uevents for devices and character
// devices, rtnetlink link events for the network devices that the ports
// of rxe and siw follow. The ports of every other driver, whose state the
// hardware changes without such an event, are read again on every call.
func List() (*Snapshot, error) { return global.list() }

func (l *lister) list() (*Snapshot, error) {
	var out *Snapshot
	err := l.c.List(func(s *devcache.Snapshot, gen uint64) {
		if l.last == nil || gen != l.gen {
			l.last, l.gen = join(l.fs, s), gen
		} else {
			for i := range l.last.Devices {
				d := &l.last.Devices[i]
				for j := range d.Ports {
					d.Ports[j].update(s.Devices[i].Ports[j])
				}
			}
		}
		out = l.last.clone()
	})
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	return out, nil
}

// clone is a deep copy: callers own what List returns.
func (s *Snapshot) clone() *Snapshot {
	c := &Snapshot{Devices: slices.Clone(s.Devices), RdmaCM: cloneChardev(s.RdmaCM)}
	for i := range c.Devices {
		d := &c.Devices[i]
		d.Ports = slices.Clone(d.Ports)
		for j := range d.Ports {
			d.Ports[j].Umad, d.Ports[j].Issm = cloneChardev(d.Ports[j].Umad), cloneChardev(d.Ports[j].Issm)
		}
	}
	return c
}

func cloneChardev(c *nldev.Chardev) *nldev.Chardev {
	if c == nil {
		return nil
	}
	x := *c
	return &x
}
