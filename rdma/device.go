package rdma

import (
	"fmt"
	"sync"

	"github.com/rdmastack/rdmastack/uverbs"
)

// Device is one cached, opened RDMA device, shared by every list and user
// in the process. Do not Close its context: it belongs to the cache.
type Device struct {
	name  string
	index int64
	node  string // the uverbs char device's name: with index, the device's identity

	ctx   *uverbs.Context
	close func() error // closes ctx; the cache calls it once, when the device is dropped
	attr  *uverbs.DeviceAttr
	ports []*uverbs.PortAttr // ports[0] is port 1

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

// Context returns the device's shared verbs context, for creating
// protection domains, queues and the rest. It belongs to the cache: do not
// Close it.
func (d *Device) Context() (*uverbs.Context, error) {
	if err := d.removed("context"); err != nil {
		return nil, err
	}
	return d.ctx, nil
}

// Attr returns the device attributes queried when the device was opened.
func (d *Device) Attr() (*uverbs.DeviceAttr, error) {
	if err := d.removed("query device"); err != nil {
		return nil, err
	}
	return d.attr, nil
}

// Port returns the attributes of port n (from 1) queried when the device
// was opened.
func (d *Device) Port(n int) (*uverbs.PortAttr, error) {
	op := fmt.Sprintf("query port %d", n)
	if err := d.removed(op); err != nil {
		return nil, err
	}
	if n < 1 || n > len(d.ports) {
		return nil, fmt.Errorf("rdma: %s: %s: the device has ports 1 to %d: %w", d.name, op, len(d.ports), errInvalid)
	}
	return d.ports[n-1], nil
}

func (d *Device) String() string { return d.name }
