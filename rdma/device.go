package rdma

import (
	"fmt"
	"sync"

	"github.com/rdmastack/rdmastack/uverbs"
)

// Device is one cached, opened RDMA device, shared by every list and user
// in the process.
type Device struct {
	name  string
	index int64
	node  string // the uverbs char device's name: with index, the device's identity

	ctx   *uverbs.Context
	close func() error // closes ctx (shared: its own Close refuses); the cache calls it once, when the device is dropped
	attr  uverbs.DeviceAttr
	ports []uverbs.PortAttr // ports[0] is port 1

	mu   sync.Mutex // guards refs and dead; the cache's lock is taken first
	refs int
	dead bool
}

// Name returns the device's name ("rxe0").
func (d *Device) Name() string { return d.name }

// Index returns the device's RDMA netlink index.
func (d *Device) Index() int64 { return d.index }

// Dead reports whether the device has disappeared.
func (d *Device) Dead() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

func (d *Device) removed(op string) error {
	if d.Dead() {
		return fmt.Errorf("rdma: %s: %s: %w", d.name, op, ErrDeviceRemoved)
	}
	return nil
}

// Context returns the device's verbs context, for creating protection
// domains, queues and the rest. Every user of the device shares it, and it
// belongs to the cache, which closes it once the device is gone and no
// list holds it: its Close returns an error matching uverbs.ErrShared and
// leaves it open. The objects created through it are the caller's to
// close.
func (d *Device) Context() (*uverbs.Context, error) {
	if err := d.removed("context"); err != nil {
		return nil, err
	}
	return d.ctx, nil
}

// Attr returns a copy of the device attributes queried when the device
// was opened.
func (d *Device) Attr() (uverbs.DeviceAttr, error) {
	if err := d.removed("query device"); err != nil {
		return uverbs.DeviceAttr{}, err
	}
	return d.attr, nil
}

// Port returns a copy of the attributes of port n (from 1) queried when
// the device was opened.
func (d *Device) Port(n int) (uverbs.PortAttr, error) {
	op := fmt.Sprintf("query port %d", n)
	if err := d.removed(op); err != nil {
		return uverbs.PortAttr{}, err
	}
	if n < 1 || n > len(d.ports) {
		return uverbs.PortAttr{}, fmt.Errorf("rdma: %s: %s: the device has ports 1 to %d: %w", d.name, op, len(d.ports), errInvalid)
	}
	return d.ports[n-1], nil
}

func (d *Device) String() string { return d.name }
