package uverbs

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// EventType is an asynchronous event's type (enum ib_event_type, the
// values uverbs passes in ib_uverbs_async_event_desc.event_type).
type EventType uint32

// Event types.
const (
	EventCQErr            EventType = 0
	EventQPFatal          EventType = 1
	EventQPReqErr         EventType = 2
	EventQPAccessErr      EventType = 3
	EventCommEst          EventType = 4
	EventSQDrained        EventType = 5
	EventPathMig          EventType = 6
	EventPathMigErr       EventType = 7
	EventDeviceFatal      EventType = 8
	EventPortActive       EventType = 9
	EventPortErr          EventType = 10
	EventLIDChange        EventType = 11
	EventPKeyChange       EventType = 12
	EventSMChange         EventType = 13
	EventSRQErr           EventType = 14
	EventSRQLimitReached  EventType = 15
	EventQPLastWQEReached EventType = 16
	EventClientReregister EventType = 17
	EventGIDChange        EventType = 18
	EventWQFatal          EventType = 19
)

var eventNames = [...]string{"CQ_ERR", "QP_FATAL", "QP_REQ_ERR", "QP_ACCESS_ERR", "COMM_EST", "SQ_DRAINED",
	"PATH_MIG", "PATH_MIG_ERR", "DEVICE_FATAL", "PORT_ACTIVE", "PORT_ERR", "LID_CHANGE", "PKEY_CHANGE",
	"SM_CHANGE", "SRQ_ERR", "SRQ_LIMIT_REACHED", "QP_LAST_WQE_REACHED", "CLIENT_REREGISTER", "GID_CHANGE",
	"WQ_FATAL"}

// String returns the event's name without the IBV_EVENT_ prefix.
func (t EventType) String() string {
	if int(t) < len(eventNames) {
		return eventNames[t]
	}
	return fmt.Sprintf("EventType(%d)", uint32(t))
}

// AsyncEvent is one event read from the context's async event fd.
type AsyncEvent struct {
	Type EventType
	// Element is the raw element: the port number for port events, the
	// object's user handle for QP, CQ and SRQ events.
	Element uint64

	// Port is set for port events (PORT_ACTIVE, PORT_ERR, LID_CHANGE,
	// PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE); QP, CQ and
	// SRQ name the object of the others, when it is still open.
	Port int
	QP   *QP
	CQ   *CQ
	SRQ  *SRQ
}

// IsPortEvent reports whether t concerns a port.
func (t EventType) IsPortEvent() bool {
	switch t {
	case EventPortActive, EventPortErr, EventLIDChange, EventPKeyChange, EventSMChange, EventClientReregister, EventGIDChange:
		return true
	}
	return false
}

// GetEvent waits for the next asynchronous event (ibv_get_async_event)
// in Go's netpoller. It returns an error matching context.Canceled when
// ctx is cancelled, one matching os.ErrDeadlineExceeded (and
// context.DeadlineExceeded) when ctx's deadline passes, and one matching
// os.ErrClosed when the context is closed, before or during the wait.
func (c *Context) GetEvent(ctx context.Context) (AsyncEvent, error) {
	const op = "get async event"
	if c.events == nil {
		return AsyncEvent{}, wrap(c.dev.Name, op, fmt.Errorf("no async event fd: %w", ErrNotSupported))
	}
	var desc abi.AsyncEventDesc
	b := kabi.Bytes(&desc)
	n, err := c.events.Read(ctx, b)
	if err != nil {
		return AsyncEvent{}, c.wrapCmd(op, err)
	}
	if n != len(b) {
		return AsyncEvent{}, wrap(c.dev.Name, op, fmt.Errorf("short event of %d bytes: %w", n, unix.EPROTO))
	}
	return c.decodeEvent(desc), nil
}

func (c *Context) decodeEvent(d abi.AsyncEventDesc) AsyncEvent {
	ev := AsyncEvent{Type: EventType(d.EventType), Element: d.Element}
	switch {
	case ev.Type.IsPortEvent():
		ev.Port = int(d.Element)
	case ev.Type == EventDeviceFatal:
	default:
		switch o := c.lookup(d.Element).(type) {
		case *QP:
			ev.QP = o
		case *CQ:
			ev.CQ = o
		case *SRQ:
			ev.SRQ = o
		}
	}
	return ev
}
