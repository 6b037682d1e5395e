// Package nlwatch receives netlink multicast messages without waiting: the
// one place that owns such sockets. The uevent package reads the kernel's
// device events through it; the device package reads rtnetlink's link
// events (RTMGRP_LINK) to know when a port's network device changed.
package nlwatch

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/waitfd"
)

// maxMessage bounds one datagram read; a longer one is cut (MSG_TRUNC
// semantics), which for a watcher only means less to parse. 32 KiB holds
// any uevent (UEVENT_BUFFER_SIZE is 2048) and any rtnetlink link message.
const maxMessage = 32 << 10

// rcvbuf is the receive buffer asked for; a burst beyond it is reported
// as ErrOverrun, never lost silently.
const rcvbuf = 1 << 20

// ErrOverrun means the kernel dropped messages because the socket's
// buffer was full (ENOBUFS): anything may have changed.
var ErrOverrun = errors.New("netlink watch: messages were dropped")

// Conn is a non-blocking netlink socket bound to multicast groups, in the
// network namespace of the thread that opened it. Pending and Changed
// never wait; Wait parks in the netpoller. A Conn is for one goroutine
// at a time, except that Close may come from another to end a Wait.
type Conn struct {
	fd    int        // -1 once closed
	w     *waitfd.FD // owns fd
	buf   []byte
	proto string
}

// Listen opens a socket of the netlink protocol bound to groups (a bit
// mask, as in sockaddr_nl.nl_groups).
func Listen(protocol int, groups uint32) (*Conn, error) {
	name := fmt.Sprintf("netlink protocol %d", protocol)
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, protocol)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, os.NewSyscallError("socket", err))
	}
	// Best effort: without privilege the kernel caps it at rmem_max.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", name, os.NewSyscallError("bind", err))
	}
	w, err := waitfd.Adopt(fd, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Conn{fd: fd, w: w, buf: make([]byte, maxMessage), proto: name}, nil
}

// Pending calls fn with every message queued on c that the kernel sent
// (port id 0), without waiting, and returns when none is left. The slice
// is only valid during the call. If the kernel dropped messages the error
// matches ErrOverrun and unix.ENOBUFS; the queue is drained anyway.
func (c *Conn) Pending(fn func([]byte)) error { return c.pending(c.fd, fn) }

// pending is Pending on fd, c's socket: Wait's try is given it by the
// netpoller, and must not read c.fd, which a Close may change under it.
func (c *Conn) pending(fd int, fn func([]byte)) error {
	overrun := false
	for {
		n, from, err := unix.Recvfrom(fd, c.buf, unix.MSG_DONTWAIT)
		switch {
		case err == unix.EAGAIN:
			if overrun {
				return fmt.Errorf("%s: %w: %w", c.proto, ErrOverrun, unix.ENOBUFS)
			}
			return nil
		case err == unix.ENOBUFS:
			overrun = true
			continue
		case err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", c.proto, os.NewSyscallError("recvfrom", err))
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue // only the kernel speaks on these groups
		}
		fn(c.buf[:min(n, len(c.buf))])
	}
}

// Changed drains c and reports whether anything may have changed since
// the last call: a message for which match returns true (any message, if
// match is nil) arrived, or messages were dropped. A nil Conn, or one
// whose socket failed (it is then closed), always reports true: its
// owner cannot know, and must ask the kernel.
func (c *Conn) Changed(match func([]byte) bool) bool {
	if c == nil || c.fd < 0 {
		return true
	}
	changed := false
	err := c.Pending(func(b []byte) { changed = changed || match == nil || match(b) })
	if err != nil && !errors.Is(err, ErrOverrun) {
		c.Close()
	}
	return changed || err != nil
}

// Wait waits, parked in the netpoller, until a message for which match
// returns true (any message, if match is nil) has arrived since the last
// look, or messages were dropped, draining what is queued as Changed
// does. It returns nil then, ctx's error when ctx ends first, an error
// matching os.ErrClosed once c is closed (Close ends a Wait), and the
// socket's error if it failed.
func (c *Conn) Wait(ctx context.Context, match func([]byte) bool) error {
	if c == nil {
		return fmt.Errorf("netlink watch: wait: %w", os.ErrClosed)
	}
	var failed error
	err := c.w.Wait(ctx, func(fd uintptr) bool {
		changed := false
		err := c.pending(int(fd), func(b []byte) { changed = changed || match == nil || match(b) })
		if err != nil && !errors.Is(err, ErrOverrun) {
			failed = err
		}
		// Pending read until EAGAIN: readiness wakes the next try.
		return changed || err != nil
	}, nil)
	if err != nil {
		return fmt.Errorf("%s: wait: %w", c.proto, err)
	}
	return failed
}

// Close closes the socket. Safe to call more than once, and on nil.
func (c *Conn) Close() error {
	if c == nil || c.fd < 0 {
		return nil
	}
	c.fd = -1
	return c.w.Close()
}
