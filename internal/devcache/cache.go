// Package devcache keeps the process's one snapshot of its RDMA devices,
// current from the kernel's events, for the two packages that list
// devices: device (List, the whole model) and rdma (librdmacm's device
// list, the devices to open). Both import it, so the process keeps one
// RDMA netlink socket, one uevent socket and one inventory for both, and
// neither promises the other anything in its public API.
package devcache

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/nlconn"
	"github.com/rdmastack/rdmastack/internal/nlwatch"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/internal/uevent"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// settle is how long after a network-device event List keeps re-reading
// the ports it otherwise answers from the last snapshot. The kernel sends
// RTM_NEWLINK for an administrative up or down just before it calls the
// netdevice notifiers through which rxe and siw set their port state
// (__dev_notify_flags), so the message can be read before the state has
// changed; a carrier change is sent after them (netdev_state_change).
const settle = Settle

// Settle is settle, for the watchers of package device, which read the
// ports once more as long after a netdev event.
const Settle = 250 * time.Millisecond

// Cache keeps the last snapshot of one network namespace and the event
// sockets that tell when it is stale. Without them (uevents are delivered
// only to namespaces of the initial user namespace, or a socket cannot be
// had) every List asks the kernel for everything.
type Cache struct {
	mu    sync.Mutex
	netns uint64        // the namespace (nsfs inode) of the sockets below
	conn  bool          // connect has run since the last reset
	ev    *uevent.Conn  // RDMA devices and character devices came, went, moved
	links *nlwatch.Conn // network devices changed (RTMGRP_LINK)
	last  *Snapshot     // the last inventory; nil: none valid
	gen   uint64        // counts the inventories taken, across resets: the generation of last
	until time.Time     // ports are re-read until then
	fs    sysfs.FS
}

// Global is the process's cache, of the system's sysfs.
var Global = &Cache{fs: sysfs.Sys}

// List brings the snapshot of the calling thread's network namespace up
// to date and calls fn with it and its generation, under the cache's
// lock: fn must not keep s or anything in it, nor call the cache.
//
// The first List in a namespace asks RDMA netlink and sysfs for
// everything (a new generation). Later ones keep the snapshot for as long
// as the kernel's events say nothing changed — uevents for devices and
// character devices, rtnetlink link events for the network devices that
// the ports of rxe and siw follow — and re-read only the ports of every
// other driver, whose state the hardware changes without such an event.
func (c *Cache) List(fn func(s *Snapshot, gen uint64)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.connect(); err != nil {
		return err
	}
	full := c.last == nil || c.ev.Changed()
	now := time.Now()
	if c.links.Changed(nil) {
		c.until = now.Add(settle)
	}
	if !full {
		switch err := c.refreshPorts(now); {
		case err == nil:
			fn(c.last, c.gen)
			return nil
		case !errors.Is(err, os.ErrNotExist):
			c.reset()
			return err
		}
		// A device went before its event was read: start again.
	}
	if err := c.take(); err != nil {
		return err
	}
	fn(c.last, c.gen)
	return nil
}

// connect makes sure the sockets are open in the calling thread's network
// namespace; those of another namespace are closed first. The RDMA
// netlink socket is the process's one (internal/nlconn), which follows
// the namespace by itself; connect dials it first, so that a kernel
// without RDMA fails here.
func (c *Cache) connect() error {
	ns, err := nlconn.NetNS()
	if err != nil || ns != c.netns {
		c.reset()
		c.netns = ns
	}
	if c.conn {
		return nil
	}
	if err := nlconn.Do(func(*nldev.Client) error { return nil }); err != nil {
		return err
	}
	c.conn = true
	// Listen before the first inventory, so that nothing between the two
	// goes unseen.
	if c.netns != 0 {
		if c.ev = uevent.ListenIfDelivered(); c.ev != nil {
			c.links, _ = nlwatch.Listen(unix.NETLINK_ROUTE, unix.RTMGRP_LINK)
		}
	}
	return nil
}

// take replaces the last snapshot with a whole inventory, of a new
// generation. Without uevents (c.ev nil) List takes one every time, and
// the snapshot only serves Verbs.
func (c *Cache) take() error {
	c.last = nil
	var inv *nldev.Inventory
	err := nlconn.Do(func(nl *nldev.Client) (err error) {
		inv, err = nl.Inventory()
		return err
	})
	if err != nil {
		c.reset()
		return err
	}
	c.last = Join(c.fs, inv)
	c.gen++
	return nil
}

// refreshPorts re-reads the ports that may have changed unseen: all of
// them while a network-device event settles, else those whose driver
// does not derive its port state from a network device.
func (c *Cache) refreshPorts(now time.Time) error {
	var devs []nldev.Device
	var at []int
	for i, d := range c.last.Devices {
		if now.Before(c.until) || !FollowsNetdev(d.Verbs.DriverID, d.LinkLayers) {
			devs = append(devs, nldev.Device{Index: d.Index, Name: d.Name, Ports: uint32(len(d.Ports))})
			at = append(at, i)
		}
	}
	if len(devs) == 0 {
		return nil
	}
	var ports [][]nldev.Port
	err := nlconn.Do(func(nl *nldev.Client) (err error) {
		ports, err = nl.PortsOf(devs)
		return err
	})
	if err != nil {
		return err
	}
	for k, i := range at {
		d := &c.last.Devices[i]
		for j := range d.Ports {
			if j < len(ports[k]) {
				d.Ports[j] = ports[k][j]
			}
		}
	}
	return nil
}

// reset drops the event sockets and the last snapshot (internal/nlconn
// drops the netlink socket on the errors that call for it); the
// generation goes on counting, so the next snapshot is of a new one.
func (c *Cache) reset() {
	c.ev.Close()
	c.links.Close()
	c.conn, c.ev, c.links, c.last, c.until = false, nil, nil, nil, time.Time{}
}

// Verbs returns the generation of the snapshot of the calling thread's
// network namespace and, when the generation is not since, the
// snapshot's devices in index order (Uverbs "" for one without a uverbs
// char device): what package rdma opens. The snapshot is first brought up
// to date as List does, but for the ports (what a verbs context opens
// with does not change with a port's state). Where no uevent says when
// it is stale, a GET dump, cheaper than the whole inventory, tells
// whether the devices are still those of the last one. A new generation
// means the devices may have changed; generations start at 1, so since 0
// always gets the devices.
func (c *Cache) Verbs(since uint64) (uint64, []uverbs.Device, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.connect(); err != nil {
		return 0, nil, fmt.Errorf("device: list: %w", err)
	}
	var stale bool
	switch {
	case c.last == nil:
		stale = true
	case c.ev != nil:
		stale = c.ev.Changed()
	default:
		var devs []nldev.Device
		err := nlconn.Do(func(nl *nldev.Client) (err error) {
			devs, err = nl.Devices()
			return err
		})
		if err != nil {
			c.reset()
			return 0, nil, fmt.Errorf("device: list: %w", err)
		}
		stale = !sameDevices(c.last, devs)
	}
	if stale {
		if err := c.take(); err != nil {
			return 0, nil, fmt.Errorf("device: list: %w", err)
		}
	}
	if c.gen == since {
		return c.gen, nil, nil
	}
	devs := make([]uverbs.Device, len(c.last.Devices))
	for i, d := range c.last.Devices {
		devs[i] = d.Verbs
	}
	return c.gen, devs, nil
}

// sameDevices reports whether a GET dump lists the devices of snap, each
// with a uverbs char device (one that had none may have gained one, which
// only a whole inventory would tell).
func sameDevices(snap *Snapshot, devs []nldev.Device) bool {
	if len(devs) != len(snap.Devices) {
		return false
	}
	for i, d := range snap.Devices {
		if d.Index != devs[i].Index || d.Name != devs[i].Name || d.Verbs.Uverbs == "" {
			return false
		}
	}
	return true
}
