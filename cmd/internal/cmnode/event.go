package cmnode

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma"
)

// Status is an event's status as librdmacm's event->status holds it: 0,
// a negative errno, or a positive reject reason or SIDR status.
func Status(err error) int {
	if err == nil {
		return 0
	}
	var rr rdma.RejectReason
	if errors.As(err, &rr) {
		return int(rr)
	}
	var re rdma.RejectErrno // iWARP: the errno, negative
	if errors.As(err, &re) {
		return -int(re)
	}
	var ss rdma.SIDRStatus
	if errors.As(err, &ss) {
		return int(ss)
	}
	var en unix.Errno
	if errors.As(err, &en) {
		return -int(en)
	}
	return -int(unix.EINVAL)
}

// EventError prints the line udaddy, mckey and cmatose print for a
// failure event, "<prog>: event: <name>, error: <status>", and returns
// the status.
func EventError(stdout io.Writer, prog string, ev *rdma.Event) int {
	st := Status(ev.Status)
	fmt.Fprintf(stdout, "%s: event: %s, error: %d\n", prog, EventName(ev.Type), st)
	return st
}

// EventName is rdma_event_str's name for an event type.
func EventName(t rdma.EventType) string { return t.String() }

// Errno is the errno a failed call leaves, for perror: the unix.Errno in
// err; ECONNREFUSED for a rejection (librdmacm's synchronous calls
// report a REJECTED event so); else EINVAL.
func Errno(err error) unix.Errno {
	var en unix.Errno
	if errors.As(err, &en) {
		return en
	}
	if errors.Is(err, unix.ECONNREFUSED) { // a RejectReason or RejectErrno
		return unix.ECONNREFUSED
	}
	return unix.EINVAL
}

// Perror is perror(3)'s line: "what: strerror(errno)".
func Perror(what string, err error) string {
	return what + ": " + strerror(Errno(err))
}

// strerror is glibc's text for an errno: Go's, capitalised as glibc's.
func strerror(e unix.Errno) string {
	s := e.Error()
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// CreateChannel is the examples' create_first_event_channel: the event
// channel, or the message librdmacm's programs print and the errno they
// leave (ENODEV when there is no RDMA device).
func CreateChannel() (*rdma.EventChannel, string, unix.Errno) {
	ch, err := rdma.CreateEventChannel()
	if err == nil {
		return ch, "", 0
	}
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENODEV) {
		return nil, "No RDMA devices were detected", unix.ENODEV
	}
	return nil, Perror("failed to create RDMA CM event channel", err), Errno(err)
}
