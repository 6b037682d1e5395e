package collector

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// kernel is everything the collector asks the kernel, in one interface so
// that the unit tests can play the kernel. live is the real one.
type kernel interface {
	// devices lists every RDMA device of the namespace.
	devices() (*device.Snapshot, error)
	// portCounters reads the hardware counters of many ports at once.
	portCounters(ports []nldev.PortID) ([][]nldev.Counter, []error)
	// resources is every device's resource summary.
	resources() ([]nldev.ResourceSummary, error)
	counterStatus(dev, port uint32) ([]nldev.CounterInfo, error)
	setOptionalCounters(dev, port uint32, indexes []uint32) error
	qpCounterMode(dev, port uint32) (nldev.QPCounterMode, error)
	setQPCounterAuto(dev, port uint32, mask nldev.AutoModeMask) error
	qpCounters(dev uint32) ([]nldev.QPCounter, error)
	// queryPorts opens d's verbs context, queries each of its ports and
	// closes the context again: a context held open would keep a device
	// whose driver cannot disassociate (rxe) from being removed.
	queryPorts(d device.Device) ([]*uverbs.PortAttr, error)
	// monitor subscribes to the RDMA monitor events.
	monitor() (events, error)
	close() error
}

// live is the running kernel: one RDMA netlink socket, opened when first
// needed and again after it failed, and package device's snapshot.
type live struct {
	nl *nldev.Client
}

// do runs fn with the socket, dialled when there is none. An error that is
// not an answer about a device or a port may be the socket's: it is then
// closed, and the next call dials again.
func (k *live) do(fn func(*nldev.Client) error) error {
	if k.nl == nil {
		c, err := nldev.Dial()
		if err != nil {
			return err
		}
		k.nl = c
	}
	err := fn(k.nl)
	if err != nil && !answer(err) {
		k.nl.Close()
		k.nl = nil
	}
	return err
}

// answer reports whether err is the kernel's answer to the question, as
// opposed to a failure of the socket that carried it.
func answer(err error) bool {
	for _, e := range []error{os.ErrNotExist, os.ErrPermission, nldev.ErrNoCounters, ib.ErrNotSupported, unix.EINVAL, unix.EOPNOTSUPP, unix.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (k *live) devices() (*device.Snapshot, error) { return device.List() }

func (k *live) portCounters(ports []nldev.PortID) (ctrs [][]nldev.Counter, errs []error) {
	err := k.do(func(c *nldev.Client) error {
		ctrs, errs = c.PortCountersOf(ports)
		return nil
	})
	if err != nil {
		ctrs, errs = make([][]nldev.Counter, len(ports)), make([]error, len(ports))
		for i := range errs {
			errs[i] = err
		}
	}
	return ctrs, errs
}

func (k *live) resources() (s []nldev.ResourceSummary, err error) {
	err = k.do(func(c *nldev.Client) error { s, err = c.ResourceSummary(); return err })
	return s, err
}

func (k *live) counterStatus(dev, port uint32) (s []nldev.CounterInfo, err error) {
	err = k.do(func(c *nldev.Client) error { s, err = c.CounterStatus(dev, port); return err })
	return s, err
}

func (k *live) setOptionalCounters(dev, port uint32, indexes []uint32) error {
	return k.do(func(c *nldev.Client) error { return c.SetOptionalCounters(dev, port, indexes) })
}

func (k *live) qpCounterMode(dev, port uint32) (m nldev.QPCounterMode, err error) {
	err = k.do(func(c *nldev.Client) error { m, err = c.QPCounterMode(dev, port); return err })
	return m, err
}

func (k *live) setQPCounterAuto(dev, port uint32, mask nldev.AutoModeMask) error {
	return k.do(func(c *nldev.Client) error { return c.SetQPCounterAuto(dev, port, mask) })
}

func (k *live) qpCounters(dev uint32) (q []nldev.QPCounter, err error) {
	err = k.do(func(c *nldev.Client) error { q, err = c.QPCounters(dev, 0); return err })
	return q, err
}

func (k *live) queryPorts(d device.Device) ([]*uverbs.PortAttr, error) {
	ctx, err := d.Open()
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	out := make([]*uverbs.PortAttr, len(d.Ports))
	for i, p := range d.Ports {
		if out[i], err = ctx.QueryPort(int(p.Number)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (k *live) monitor() (events, error) { return nldev.DialMonitor() }

func (k *live) close() error {
	if k.nl == nil {
		return nil
	}
	err := k.nl.Close()
	k.nl = nil
	return err
}
