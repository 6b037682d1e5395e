package uevent

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/nlwatch"
)

// kernelGroup is the multicast group of the kernel's own uevents (group 2
// carries udevd's re-broadcasts, in libudev's format).
const kernelGroup = 1

// ErrOverrun means the kernel dropped events: anything may have changed.
var ErrOverrun = nlwatch.ErrOverrun

// Conn receives the kernel's uevents without waiting, in the network
// namespace of the thread that opened it.
type Conn struct{ w *nlwatch.Conn }

// Listen opens a Conn.
func Listen() (*Conn, error) {
	w, err := nlwatch.Listen(unix.NETLINK_KOBJECT_UEVENT, kernelGroup)
	if err != nil {
		return nil, err
	}
	return &Conn{w}, nil
}

// Pending calls fn for every event queued on c, without waiting, and
// returns when none is left; messages that do not parse are skipped. If
// the kernel dropped events the error matches ErrOverrun.
func (c *Conn) Pending(fn func(Event)) error {
	return c.w.Pending(func(b []byte) {
		if e, err := Parse(b); err == nil {
			fn(e)
		}
	})
}

// ListenIfDelivered opens a Conn if the kernel delivers uevents to the
// calling thread's network namespace (see Delivered), else returns nil.
func ListenIfDelivered() *Conn {
	if ok, _ := Delivered(); !ok {
		return nil
	}
	c, err := Listen()
	if err != nil {
		return nil
	}
	return c
}

// Changed drains c and reports whether RDMA devices may have changed
// since the last call: an event for which Event.RDMA holds arrived, or
// events were dropped. A nil Conn, or one whose socket failed, always
// reports true.
func (c *Conn) Changed() bool {
	if c == nil {
		return true
	}
	return c.w.Changed(isRDMA)
}

// Wait waits, parked in the netpoller, until RDMA devices may have
// changed: an event for which Event.RDMA holds arrives, or events were
// dropped. It returns ctx's error when ctx ends first, and an error
// matching os.ErrClosed once c is closed.
func (c *Conn) Wait(ctx context.Context) error {
	if c == nil {
		return fmt.Errorf("uevent: wait: %w", os.ErrClosed)
	}
	return c.w.Wait(ctx, isRDMA)
}

func isRDMA(b []byte) bool {
	e, err := Parse(b)
	return err == nil && e.RDMA()
}

// Close closes the socket. Safe to call more than once, and on nil.
func (c *Conn) Close() error {
	if c == nil {
		return nil
	}
	return c.w.Close()
}
