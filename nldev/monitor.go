package nldev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// EventType is the kind of an RDMA monitor event
// (enum rdma_nl_notify_event_type, RDMA_NLDEV_ATTR_EVENT_TYPE).
type EventType uint8

// Monitor event types.
const (
	EventRegister     EventType = 0 // RDMA_REGISTER_EVENT: a device appeared
	EventUnregister   EventType = 1 // RDMA_UNREGISTER_EVENT: a device went away
	EventNetdevAttach EventType = 2 // RDMA_NETDEV_ATTACH_EVENT: a port got a netdev
	EventNetdevDetach EventType = 3 // RDMA_NETDEV_DETACH_EVENT: a port lost its netdev
	EventRename       EventType = 4 // RDMA_RENAME_EVENT (6.13)
	EventNetdevRename EventType = 5 // RDMA_NETDEV_RENAME_EVENT (6.13)
)

var eventNames = [...]string{"REGISTER", "UNREGISTER", "NETDEV_ATTACH", "NETDEV_DETACH", "RENAME", "NETDEV_RENAME"}

// String returns iproute2's name of the event ("REGISTER").
func (t EventType) String() string {
	if int(t) < len(eventNames) {
		return eventNames[t]
	}
	return fmt.Sprintf("UNKNOWN 0x%02x", uint8(t))
}

// Event is one RDMA monitor event. Which fields are set depends on the type:
// REGISTER, UNREGISTER and RENAME name the device; NETDEV_ATTACH and
// NETDEV_DETACH also the port and (when in this namespace) the netdev;
// NETDEV_RENAME only the netdev.
type Event struct {
	Type        EventType
	DevIndex    uint32 // RDMA_NLDEV_ATTR_DEV_INDEX
	DevName     string // RDMA_NLDEV_ATTR_DEV_NAME
	Port        uint32 // RDMA_NLDEV_ATTR_PORT_INDEX; 0 when absent
	NetdevIndex uint32 // RDMA_NLDEV_ATTR_NDEV_INDEX
	Netdev      string // RDMA_NLDEV_ATTR_NDEV_NAME

	// Has tells which of the optional fields the kernel sent.
	HasDev, HasPort, HasNetdevIndex, HasNetdev bool
}

// Monitor receives RDMA monitor events: the kernel multicasts them to the
// RDMA_NL_GROUP_NOTIFY group (Linux 6.12). Close releases its socket.
type Monitor struct {
	c *netlink.Conn
}

// DialMonitor subscribes to the monitor events of the caller's network
// namespace. On kernels without RDMA monitoring the error matches
// ErrNotSupported and names the release that brings it.
func DialMonitor() (*Monitor, error) { return dialMonitor(nil) }

// DialMonitorNetNS subscribes to the monitor events of the network
// namespace that the open file nsfd refers to, without moving the calling
// thread. In exclusive netns mode it sees only that namespace's devices.
func DialMonitorNetNS(nsfd int) (*Monitor, error) {
	if err := checkNetnsFD("monitor", nsfd); err != nil {
		return nil, err
	}
	return dialMonitor(&netlink.Config{NetNS: nsfd})
}

func dialMonitor(cfg *netlink.Config) (*Monitor, error) {
	const op = "monitor"
	c, err := dial(cfg)
	if err != nil {
		return nil, err
	}
	sys, err := c.System()
	c.Close()
	if err != nil {
		return nil, err
	}
	if sys.Monitor == nil || !*sys.Monitor {
		return nil, &Error{Op: op, Err: fmt.Errorf("RDMA monitoring needs Linux 6.12: %w", ErrNotSupported)}
	}
	mc := netlink.Config{Groups: 1 << (nlabi.RDMA_NL_GROUP_NOTIFY - 1)}
	if cfg != nil {
		mc.NetNS = cfg.NetNS
	}
	conn, err := netlink.Dial(unix.NETLINK_RDMA, &mc)
	if err != nil {
		return nil, wrap(op, err)
	}
	return &Monitor{c: conn}, nil
}

// Close stops the subscription. Closing twice is harmless.
func (m *Monitor) Close() error {
	if m == nil || m.c == nil {
		return nil
	}
	err := m.c.Close()
	m.c = nil
	return err
}

// Receive waits for the next events and returns them (one datagram may
// carry several). It returns ctx's error when ctx ends first.
func (m *Monitor) Receive(ctx context.Context) ([]Event, error) {
	const op = "receive monitor events"
	if m == nil || m.c == nil {
		return nil, &Error{Op: op, Err: unix.EBADF}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Wake the blocked read when ctx ends. The wake-up runs on a
	// goroutine of its own, which stop does not wait for: Receive waits
	// for it, so that nothing touches the socket after Receive returned
	// (a Close may follow at once).
	c := m.c
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		c.SetReadDeadline(time.Unix(1, 0))
	})
	defer func() {
		if !stop() {
			<-woken
		}
		c.SetReadDeadline(time.Time{})
	}()
	for {
		msgs, err := c.Receive()
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, ctx.Err()
			}
			return nil, wrap(op, err)
		}
		var evs []Event
		for _, msg := range msgs {
			if nlabi.GetClient(uint16(msg.Header.Type)) != nlabi.RDMA_NL_NLDEV ||
				nlabi.GetOp(uint16(msg.Header.Type)) != nlabi.RDMA_NLDEV_CMD_MONITOR {
				continue
			}
			ev, err := decodeEvent(msg.Data)
			if err != nil {
				return nil, wrap(op, err)
			}
			evs = append(evs, ev)
		}
		if len(evs) > 0 {
			return evs, nil
		}
	}
}

func decodeEvent(b []byte) (Event, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return Event{}, err
	}
	var ev Event
	var haveType bool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_EVENT_TYPE:
			ev.Type, haveType = EventType(ad.Uint8()), true
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			ev.DevIndex, ev.HasDev = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			ev.DevName = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
			ev.Port, ev.HasPort = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_NDEV_INDEX:
			ev.NetdevIndex, ev.HasNetdevIndex = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_NDEV_NAME:
			ev.Netdev, ev.HasNetdev = ad.String(), true
		}
	}
	if err := ad.Err(); err != nil {
		return Event{}, fmt.Errorf("decode monitor event: %w", err)
	}
	if !haveType {
		return Event{}, fmt.Errorf("decode monitor event: no event type: %w", errProto)
	}
	return ev, nil
}
