package device

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/nlwatch"
	"github.com/rdmastack/rdmastack/internal/uevent"
	"github.com/rdmastack/rdmastack/nldev"
)

// settle is how long after a network-device event List keeps re-reading
// the ports it otherwise answers from the last snapshot. The kernel sends
// RTM_NEWLINK for an administrative up or down just before it calls the
// netdevice notifiers through which rxe and siw set their port state
// (__dev_notify_flags), so the message can be read before the state has
// changed; a carrier change is sent after them (netdev_state_change).
const settle = 250 * time.Millisecond

// lister keeps the last snapshot of one network namespace and the event
// sockets that tell when it is stale. Without them (uevents are delivered
// only to namespaces of the initial user namespace, or a socket cannot be
// had) every List asks the kernel for everything.
type lister struct {
	mu    sync.Mutex
	netns uint64 // the namespace (nsfs inode) of the sockets below
	nl    *nldev.Client
	ev    *uevent.Conn  // RDMA devices and character devices came, went, moved
	links *nlwatch.Conn // network devices changed (RTMGRP_LINK)
	last  *Snapshot     // the last inventory; nil: none valid
	gen   uint64        // counts the inventories taken, across resets: the generation of last
	until time.Time     // ports are re-read until then
	fs    sysFS
}

var global = &lister{fs: system}

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
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.connect(); err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	full := l.last == nil || l.ev.Changed()
	now := time.Now()
	if l.links.Changed(nil) {
		l.until = now.Add(settle)
	}
	if !full {
		switch err := l.refreshPorts(now); {
		case err == nil:
			return l.last.clone(), nil
		case !errors.Is(err, os.ErrNotExist):
			l.reset()
			return nil, fmt.Errorf("device: list: %w", err)
		}
		// A device went before its event was read: start again.
	}
	if err := l.take(); err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	return l.last.clone(), nil
}

// connect makes sure the sockets are open in the calling thread's network
// namespace; those of another namespace are closed first.
func (l *lister) connect() error {
	ns, err := netnsID()
	if err != nil || ns != l.netns {
		l.reset()
		l.netns = ns
	}
	if l.nl != nil {
		return nil
	}
	if l.nl, err = nldev.Dial(); err != nil {
		return err
	}
	// Listen before the first inventory, so that nothing between the two
	// goes unseen.
	if l.netns != 0 {
		if l.ev = uevent.ListenIfDelivered(); l.ev != nil {
			l.links, _ = nlwatch.Listen(unix.NETLINK_ROUTE, unix.RTMGRP_LINK)
		}
	}
	return nil
}

// take replaces the last snapshot with a whole inventory, of a new
// generation. Without uevents (l.ev nil) List takes one every time, and
// the snapshot only serves verbs.
func (l *lister) take() error {
	l.last = nil
	inv, err := l.nl.Inventory()
	if err != nil {
		l.reset()
		return err
	}
	l.last = join(l.fs, inv)
	l.gen++
	return nil
}

// refreshPorts re-reads the ports that may have changed unseen: all of
// them while a network-device event settles, else those whose driver
// does not derive its port state from a network device.
func (l *lister) refreshPorts(now time.Time) error {
	var devs []nldev.Device
	var at []int
	for i, d := range l.last.Devices {
		if now.Before(l.until) || !followsNetdev(d) {
			devs = append(devs, nldev.Device{Index: d.Index, Name: d.Name, Ports: uint32(len(d.Ports))})
			at = append(at, i)
		}
	}
	if len(devs) == 0 {
		return nil
	}
	ports, err := l.nl.PortsOf(devs)
	if err != nil {
		return err
	}
	for k, i := range at {
		d := &l.last.Devices[i]
		for j := range d.Ports {
			if j < len(ports[k]) {
				d.Ports[j].update(ports[k][j])
			}
		}
	}
	return nil
}

// followsNetdev reports whether the kernel sets the device's port state
// from its ports' network devices (rxe_net.c and siw_main.c do, on
// netdevice notifier events), so that rtnetlink's link events say when it
// may have changed.
func followsNetdev(d Device) bool {
	if d.DriverID != ib.DriverRXE && d.DriverID != ib.DriverSIW {
		return false
	}
	for _, p := range d.Ports {
		if p.LinkLayer != ib.LinkLayerEthernet {
			return false
		}
	}
	return true
}

// reset drops the sockets and the last snapshot; the generation goes on
// counting, so the next snapshot is of a new one.
func (l *lister) reset() {
	if l.nl != nil {
		l.nl.Close()
	}
	l.ev.Close()
	l.links.Close()
	l.nl, l.ev, l.links, l.last, l.until = nil, nil, nil, nil, time.Time{}
}

// netnsID is the calling thread's network namespace (its nsfs inode), 0
// when /proc cannot tell.
func netnsID() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
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
