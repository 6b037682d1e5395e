package uevent

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Event is one kernel uevent.
type Event struct {
	Action    string // add, remove, change, move, online, offline, bind, unbind
	DevPath   string // the device's path under /sys
	Subsystem string // e.g. infiniband, infiniband_verbs, infiniband_mad, net
	DevName   string // the node under /dev, if the device has one
	Seqnum    uint64 // the kernel's uevent sequence number
}

// ErrMalformed is returned for a message that is not a kernel uevent.
var ErrMalformed = errors.New("uevent: malformed message")

// Parse decodes one message as the kernel sends it: "ACTION@DEVPATH", then
// NUL-terminated KEY=VALUE pairs (kobject_uevent_env). The header's
// action and path must agree with ACTION and DEVPATH where those are
// present.
func Parse(b []byte) (Event, error) {
	head, rest, ok := bytes.Cut(b, []byte{0})
	if !ok {
		return Event{}, fmt.Errorf("%w: no terminated header in %d bytes", ErrMalformed, len(b))
	}
	action, path, ok := strings.Cut(string(head), "@")
	if !ok || action == "" || !strings.HasPrefix(path, "/") {
		return Event{}, fmt.Errorf("%w: header %q", ErrMalformed, head)
	}
	e := Event{Action: action, DevPath: path}
	for len(rest) > 0 {
		var kv []byte
		kv, rest, _ = bytes.Cut(rest, []byte{0})
		if len(kv) == 0 {
			continue // padding after the last pair
		}
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok || k == "" {
			return Event{}, fmt.Errorf("%w: variable %q", ErrMalformed, kv)
		}
		switch k {
		case "ACTION":
			if v != action {
				return Event{}, fmt.Errorf("%w: ACTION=%s under header %q", ErrMalformed, v, head)
			}
		case "DEVPATH":
			if v != path {
				return Event{}, fmt.Errorf("%w: DEVPATH=%s under header %q", ErrMalformed, v, head)
			}
		case "SUBSYSTEM":
			e.Subsystem = v
		case "DEVNAME":
			e.DevName = v
		case "SEQNUM":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return Event{}, fmt.Errorf("%w: SEQNUM=%s", ErrMalformed, v)
			}
			e.Seqnum = n
		}
	}
	return e, nil
}

// RDMA reports whether the event is about an RDMA device or one of its
// character devices: the infiniband, infiniband_verbs and infiniband_mad
// classes, and nodes under /dev/infiniband such as rdma_cm (a misc device).
func (e Event) RDMA() bool {
	return strings.HasPrefix(e.Subsystem, "infiniband") || strings.HasPrefix(e.DevName, "infiniband/")
}
