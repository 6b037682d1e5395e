package rdma

import (
	"fmt"

	"github.com/rdmastack/rdmastack/internal/uevent"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// source enumerates devices and opens them; the kernel is one, tests give
// a fake.
type source interface {
	// list returns the identities of the devices present now.
	list() ([]ident, error)
	// open opens and queries one device (the device and every port).
	open(id ident) (*Device, error)
}

// ident is what tells devices apart across enumerations: a device that
// went and came back under the same name gets a new index.
type ident struct {
	name  string
	index uint32
}

// kernelSource asks RDMA netlink, over one socket kept for the process,
// and GET_CHARDEV only for devices not seen before. It enumerates (one GET
// dump) on the first call and afterwards only when the kernel's uevents
// say an RDMA device or character device came, went, was renamed or moved
// (the uverbs node of a device being unregistered goes before the kernel
// waits for its contexts, so a device held open is still seen to go).
// Where uevents do not reach the caller's namespace, or the socket for
// them cannot be had, every call enumerates.
type kernelSource struct {
	c    *nldev.Client
	ev   *uevent.Conn // nil: enumerate every time
	last []ident      // the last enumeration; nil: none valid
}

func (k *kernelSource) client() (*nldev.Client, error) {
	if k.c == nil {
		c, err := nldev.Dial()
		if err != nil {
			return nil, err
		}
		k.c = c
		// Listen before the first enumeration, so that nothing between
		// the two goes unseen.
		k.ev = uevent.ListenIfDelivered()
	}
	return k.c, nil
}

// reset drops the sockets and the last enumeration: the next call starts
// afresh.
func (k *kernelSource) reset() {
	k.c.Close()
	k.ev.Close()
	k.c, k.ev, k.last = nil, nil, nil
}

func (k *kernelSource) list() ([]ident, error) {
	c, err := k.client()
	if err != nil {
		return nil, err
	}
	if k.last != nil && !k.ev.Changed() {
		return k.last, nil
	}
	k.last = nil
	devs, err := c.Devices()
	if err != nil {
		k.reset()
		return nil, err
	}
	ids := make([]ident, len(devs))
	for i, d := range devs {
		ids[i] = ident{d.Name, d.Index}
	}
	k.last = ids
	return ids, nil
}

func (k *kernelSource) open(id ident) (*Device, error) {
	c, err := k.client()
	if err != nil {
		return nil, err
	}
	nd, err := c.Device(id.index)
	if err != nil {
		return nil, err
	}
	ch, err := c.UverbsChardev(id.index)
	if err != nil {
		return nil, err
	}
	return openDevice(uverbs.NewDevice(nd, &ch))
}

// openDevice opens a device and queries it and its ports, as librdmacm's
// ucma_init_device does.
func openDevice(dev uverbs.Device) (*Device, error) {
	ctx, err := uverbs.Open(dev)
	if err != nil {
		return nil, err
	}
	attr, err := ctx.QueryDevice()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	d := &Device{name: dev.Name, index: int64(dev.Index), node: dev.Uverbs, ctx: ctx, close: ctx.Close, attr: attr}
	for p := 1; p <= int(attr.PhysPortCount); p++ {
		pa, err := ctx.QueryPort(p)
		if err != nil {
			ctx.Close()
			return nil, fmt.Errorf("rdma: open %s: %w", dev.Name, err)
		}
		d.ports = append(d.ports, pa)
	}
	return d, nil
}
