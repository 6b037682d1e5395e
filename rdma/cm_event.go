package rdma

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// EventType is what a connection manager event reports (enum
// rdma_cm_event_type).
type EventType uint32

// Event types.
const (
	EventAddrResolved    EventType = ucma.RDMA_CM_EVENT_ADDR_RESOLVED
	EventAddrError       EventType = ucma.RDMA_CM_EVENT_ADDR_ERROR
	EventRouteResolved   EventType = ucma.RDMA_CM_EVENT_ROUTE_RESOLVED
	EventRouteError      EventType = ucma.RDMA_CM_EVENT_ROUTE_ERROR
	EventConnectRequest  EventType = ucma.RDMA_CM_EVENT_CONNECT_REQUEST
	EventConnectResponse EventType = ucma.RDMA_CM_EVENT_CONNECT_RESPONSE
	EventConnectError    EventType = ucma.RDMA_CM_EVENT_CONNECT_ERROR
	EventUnreachable     EventType = ucma.RDMA_CM_EVENT_UNREACHABLE
	EventRejected        EventType = ucma.RDMA_CM_EVENT_REJECTED
	EventEstablished     EventType = ucma.RDMA_CM_EVENT_ESTABLISHED
	EventDisconnected    EventType = ucma.RDMA_CM_EVENT_DISCONNECTED
	EventDeviceRemoval   EventType = ucma.RDMA_CM_EVENT_DEVICE_REMOVAL
	EventMulticastJoin   EventType = ucma.RDMA_CM_EVENT_MULTICAST_JOIN
	EventMulticastError  EventType = ucma.RDMA_CM_EVENT_MULTICAST_ERROR
	EventAddrChange      EventType = ucma.RDMA_CM_EVENT_ADDR_CHANGE
	EventTimewaitExit    EventType = ucma.RDMA_CM_EVENT_TIMEWAIT_EXIT
)

var eventNames = [...]string{"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR", "CONNECT_REQUEST",
	"CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED", "DISCONNECTED",
	"DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT"}

// String returns rdma_event_str's name, "RDMA_CM_EVENT_ESTABLISHED".
func (t EventType) String() string {
	if int(t) < len(eventNames) {
		return "RDMA_CM_EVENT_" + eventNames[t]
	}
	return fmt.Sprintf("EventType(%d)", uint32(t))
}

// RejectReason is the IB CM reject reason a REJECTED event carries (enum
// ib_cm_rej_reason in the kernel's include/rdma/ib_cm.h). As an error it
// matches unix.ECONNREFUSED, as librdmacm's synchronous calls report it.
type RejectReason uint8

// Reject reasons seen on RoCE.
const (
	RejectNoQP             RejectReason = 1
	RejectNoResources      RejectReason = 3
	RejectTimeout          RejectReason = 4
	RejectUnsupported      RejectReason = 5
	RejectInvalidServiceID RejectReason = 8  // nobody listens on the port
	RejectStaleConn        RejectReason = 10 // a connection of the same ids is in timewait
	RejectInvalidMTU       RejectReason = 26
	RejectConsumerDefined  RejectReason = 28 // the peer rejected (Reject), or closed the request
	RejectInvalidRNRRetry  RejectReason = 29
	RejectVendorOption     RejectReason = 35 // an ECE option the peer does not support
)

var rejectNames = map[RejectReason]string{
	1: "no QP", 2: "no EEC", 3: "no resources", 4: "timeout", 5: "unsupported request",
	6: "invalid communication ID", 7: "invalid communication instance", 8: "invalid service ID",
	9: "invalid transport type", 10: "stale connection", 11: "RDC does not exist", 12: "invalid GID",
	13: "invalid LID", 14: "invalid SL", 15: "invalid traffic class", 16: "invalid hop limit",
	17: "invalid packet rate", 18: "invalid alternate GID", 19: "invalid alternate LID",
	20: "invalid alternate SL", 21: "invalid alternate traffic class", 22: "invalid alternate hop limit",
	23: "invalid alternate packet rate", 24: "port CM redirect", 25: "port redirect", 26: "invalid MTU",
	27: "insufficient responder resources", 28: "consumer defined", 29: "invalid RNR retry",
	30: "duplicate local communication ID", 31: "invalid class version", 32: "invalid flow label",
	33: "invalid alternate flow label", 35: "vendor option not supported",
}

func (r RejectReason) String() string {
	if s, ok := rejectNames[r]; ok {
		return fmt.Sprintf("%s (%d)", s, uint8(r))
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

func (r RejectReason) Error() string { return "rejected: " + r.String() }

// Is makes a reject match unix.ECONNREFUSED.
func (r RejectReason) Is(target error) bool { return target == unix.ECONNREFUSED }

// RejectErrno is the status of a REJECTED event on iWARP, where iw_cm
// gives the kernel's negative errno instead of an IB CM reason (siw: an
// MPA reject comes as ECONNRESET, a refused TCP connection as
// ECONNREFUSED). As an error it matches unix.ECONNREFUSED, as
// librdmacm's synchronous calls report every REJECTED, and its errno.
type RejectErrno unix.Errno

func (e RejectErrno) Error() string { return "rejected: " + unix.Errno(e).Error() }

// Is makes a reject match unix.ECONNREFUSED and its errno.
func (e RejectErrno) Is(target error) bool {
	return target == unix.ECONNREFUSED || target == unix.Errno(e)
}

// SIDRStatus is the status of a UD (SIDR) reply that refused a request,
// which an UNREACHABLE event on a UD id carries (enum ib_cm_sidr_status).
// As an error it matches unix.ECONNREFUSED.
type SIDRStatus uint8

var sidrNames = [...]string{"success", "no listener or unsupported", "rejected", "no QP", "redirect", "unsupported version"}

func (s SIDRStatus) String() string {
	if int(s) < len(sidrNames) {
		return fmt.Sprintf("%s (%d)", sidrNames[s], uint8(s))
	}
	return fmt.Sprintf("SIDR status %d", uint8(s))
}

func (s SIDRStatus) Error() string { return "SIDR reply: " + s.String() }

// Is makes a refusal match unix.ECONNREFUSED.
func (s SIDRStatus) Is(target error) bool { return target == unix.ECONNREFUSED }

// PeerParam is what the peer sent with a connection event: its request
// or reply values, swapped to this side's view (ResponderResources is
// what this side may answer, the peer's initiator depth), and for UD the
// remote QP's address.
type PeerParam struct {
	QPNum              uint32
	QKey               uint32 // UD
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	SRQ                bool
	AH                 uverbs.AHAttr // UD ESTABLISHED and MULTICAST_JOIN
}

// Event is one connection manager event, decoded and copied out of the
// kernel's: nothing in it is shared with the channel, and it stays valid
// after Ack and after its id is closed.
type Event struct {
	Type EventType

	// Status is nil, or why the event failed: a unix.Errno (ETIMEDOUT,
	// ENETUNREACH, ...) from the kernel's negative status, a RejectReason
	// for REJECTED (a RejectErrno on iWARP), a SIDRStatus for a UD
	// UNREACHABLE.
	Status error

	// ID is the id the event is for; for CONNECT_REQUEST it is the new id
	// of the incoming connection (Accept, Reject or Close it), and Listen
	// is the listening id it came to.
	ID     *ID
	Listen *ID

	// Multicast is the group of a MULTICAST_JOIN or MULTICAST_ERROR (ID
	// is the id that joined it).
	Multicast *Multicast

	// PrivateData is the peer's private data. The kernel reports a fixed
	// length per message (56 bytes for a REQ over IP, 196 for a REP, 148
	// for a REJ...), zero-padded past what the peer sent.
	PrivateData []byte

	Peer PeerParam

	acked bool
}

// Ack acknowledges the event (librdmacm's rdma_ack_cm_event). It is
// accounting only: events hold no kernel resource, and closing an id
// never waits for its events to be acknowledged. A second Ack does
// nothing.
func (e *Event) Ack() {
	if e == nil || e.acked {
		return
	}
	e.acked = true
	if e.ID != nil {
		e.ID.acked.Add(1)
	}
}

// rawEvent is an event as the kernel reported it, before the channel
// finds its ids.
type rawEvent struct {
	uid    uint64
	handle uint32
	typ    EventType
	status error
	data   []byte
	peer   PeerParam
	ece    ucma.ECE
}

// decodeEvent reads a GET_EVENT response. It never fails: a malformed
// length is clipped to the slot.
func decodeEvent(r *ucma.EventResp, ud bool) rawEvent {
	e := rawEvent{uid: r.UID, handle: r.ID, typ: EventType(r.Event), ece: r.ECE}
	status := int32(r.Status)
	switch {
	case status == 0:
	case e.typ == EventRejected && status > 0:
		e.status = RejectReason(status)
	case e.typ == EventRejected && status < 0:
		e.status = RejectErrno(-status)
	case e.typ == EventUnreachable && status > 0:
		e.status = SIDRStatus(status)
	case status < 0:
		e.status = unix.Errno(-status)
	default:
		e.status = fmt.Errorf("status %d", status)
	}
	if ud || e.typ == EventMulticastJoin || e.typ == EventMulticastError {
		p := r.UDParam()
		e.data = copyData(p.PrivateData[:], p.PrivateDataLen)
		e.peer = PeerParam{QPNum: p.QPNum, QKey: p.QKey, AH: ahAttr(&p.AhAttr)}
		return e
	}
	p := r.ConnParam()
	e.data = copyData(p.PrivateData[:], p.PrivateDataLen)
	e.peer = PeerParam{QPNum: p.QPNum, QKey: p.QKey, ResponderResources: p.ResponderResources,
		InitiatorDepth: p.InitiatorDepth, FlowControl: p.FlowControl, RetryCount: p.RetryCount,
		RNRRetryCount: p.RNRRetryCount, SRQ: p.SRQ != 0}
	return e
}

func copyData(b []byte, n uint8) []byte {
	if n == 0 {
		return nil
	}
	return append([]byte(nil), b[:min(int(n), len(b))]...)
}

func ahAttr(a *ucma.AhAttr) uverbs.AHAttr {
	return uverbs.AHAttr{IsGlobal: a.IsGlobal != 0, DGID: a.DGID, FlowLabel: a.FlowLabel, SGIDIndex: a.SGIDIndex,
		HopLimit: a.HopLimit, TrafficClass: a.TrafficClass, DLID: a.DLID, SL: a.SL, SrcPathBits: a.SrcPathBits,
		StaticRate: a.StaticRate, Port: a.PortNum}
}
