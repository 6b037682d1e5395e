package rdma

import (
	"fmt"

	"github.com/rdmastack/rdmastack/internal/ctxshare"
	"github.com/rdmastack/rdmastack/uverbs"
)

// source tells the cache which devices are present and opens them; the
// kernel is one, tests give a fake.
type source interface {
	// devices returns the generation of what is present and, when it is
	// not since, the devices present now. A new generation means they may
	// have changed; generations start at 1.
	devices(since uint64) (gen uint64, devs []uverbs.Device, err error)
	// open opens and queries one device (the device and every port).
	open(dev uverbs.Device) (*Device, error)
}

// ident is what tells devices apart across enumerations: a device that
// went and came back under the same name gets a new index.
type ident struct {
	name  string
	index uint32
}

func identOf(dev uverbs.Device) ident { return ident{dev.Name, dev.Index} }

// kernelSource is the process's snapshot of its devices (internal/devcache,
// the one package device's List is built on too), which keeps itself
// current from the kernel's uevents (the uverbs node of a device being
// unregistered goes before the kernel waits for its contexts, so a device
// held open is still seen to go). The cache opens no socket of its own:
// one RDMA netlink socket and one uevent socket serve both packages.
// verbs is devcache.Global.Verbs; tests give another.
type kernelSource struct {
	verbs func(since uint64) (gen uint64, devs []uverbs.Device, err error)
}

func (k kernelSource) devices(since uint64) (uint64, []uverbs.Device, error) {
	return k.verbs(since)
}

func (kernelSource) open(dev uverbs.Device) (*Device, error) { return openDevice(dev) }

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
	d := &Device{name: dev.Name, index: int64(dev.Index), node: dev.Uverbs, ctx: ctx, close: uverbs.Share(ctx, ctxshare.Key{}), attr: *attr}
	for p := 1; p <= int(attr.PhysPortCount); p++ {
		pa, err := ctx.QueryPort(p)
		if err != nil {
			ctx.Close()
			return nil, fmt.Errorf("rdma: open %s: %w", dev.Name, err)
		}
		d.ports = append(d.ports, *pa)
	}
	return d, nil
}
