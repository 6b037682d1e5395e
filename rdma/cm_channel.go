package rdma

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/waitfd"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// EventChannel is an open rdma_cm file (librdmacm's struct
// rdma_event_channel): the ids created on it, and the one queue of their
// events. Close destroys every id still open on it.
type EventChannel struct {
	fd *waitfd.FD

	// What the GetEvent holding the fd's turn fetches into and its try
	// function, made once: only the turn's holder touches them (the fd
	// serializes GetEvents; the channel keeps no turn of its own).
	buf   *ucma.EventBuf
	fetch func(uintptr) bool
	errno unix.Errno

	mu     sync.Mutex // guards ids, mcs and closed
	ids    map[uint64]*ID
	mcs    map[uint64]*Multicast // by uid too: a multicast's events carry its own
	closed bool                  // set first by Close: no id or group enrolls after

	closeOnce sync.Once
	closeErr  error
}

// nextUID numbers the ids and multicasts of every channel: an id keeps
// its uid when it migrates to another channel (MigrateID).
var nextUID atomic.Uint64

// CreateEventChannel opens the rdma_cm device (found through RDMA
// netlink, else sysfs; its ABI version checked) as a new event channel.
// Like the kernel, and unlike librdmacm, it does not require an RDMA
// device to exist: resolving an address fails instead.
func CreateEventChannel() (*EventChannel, error) {
	n, path, err := openRdmaCM()
	if err != nil {
		return nil, fmt.Errorf("rdma: create event channel: %w", err)
	}
	fd, err := waitfd.Adopt(n, path)
	if err != nil {
		return nil, fmt.Errorf("rdma: create event channel: %w", err)
	}
	ch := &EventChannel{fd: fd, buf: ucma.NewEventBuf(), ids: make(map[uint64]*ID), mcs: make(map[uint64]*Multicast)}
	ch.fetch = ch.tryFetch
	return ch, nil
}

// FD is the channel's file descriptor number, for display (librdmacm
// keeps it in rdma_event_channel.fd, which the C tools poll and print).
// It is valid until Close, after which the number may be reused. Never
// read or poll it: the channel's waits (GetEvent and the rest) own the
// descriptor, and a read of one's own would steal their events.
func (ch *EventChannel) FD() int { return ch.fd.Num() }

func (ch *EventChannel) tryFetch(fd uintptr) bool {
	ch.errno = ch.buf.Fetch(fd)
	return ch.errno != unix.EAGAIN
}

// write sends one command to the kernel; op names it in the error.
func (ch *EventChannel) write(op string, cmd uint32, req []byte, respOff int, resp []byte) error {
	err := ch.fd.Control(func(fd int) error { return ucma.Write(fd, cmd, req, respOff, resp) })
	return ch.wrapErr(op, err)
}

// wrapErr names op in a command's error; nil stays nil.
func (ch *EventChannel) wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, waitfd.ErrClosed) {
		err = errClosed
	}
	return fmt.Errorf("rdma: %s: %w", op, err)
}

// GetEvent waits for the next event of any id on the channel and returns
// it decoded (rdma_get_cm_event). Acknowledge it with Ack. It fails with
// ctx's error when ctx ends first (DeadlineExceeded matches
// os.ErrDeadlineExceeded) and with an error matching os.ErrClosed when
// the channel is closed. Events of ids already closed are dropped; a
// CONNECT_REQUEST whose listener is gone is rejected.
//
// Like librdmacm, GetEvent carries out what an event requires of an id
// with a QP before it returns: a CONNECT_RESPONSE moves the QP to RTS,
// completes the connection and is reported as ESTABLISHED (or as
// CONNECT_ERROR when that fails); REJECTED moves the QP to the error
// state.
//
// Several goroutines may wait at once: each event goes to one of them,
// and what it requires is done in the order the kernel queued the
// events (the fetch and that work happen in one turn of the channel's
// fd), though the callers may see their events in another order.
func (ch *EventChannel) GetEvent(ctx context.Context) (*Event, error) {
	for {
		var ev *Event
		var errno unix.Errno
		// Run by the fd with its turn held, once GET_EVENT answered:
		// what it fetched is decoded and dispatched before another
		// GetEvent can fetch the next.
		handle := func() {
			if errno = ch.errno; errno == 0 {
				ev = ch.dispatch(&ch.buf.Resp)
			}
		}
		if err := ch.fd.Wait(ctx, ch.fetch, handle); err != nil {
			if errors.Is(err, waitfd.ErrClosed) {
				err = errClosed
			}
			return nil, fmt.Errorf("rdma: get cm event: %w", err)
		}
		if errno != 0 {
			return nil, fmt.Errorf("rdma: get cm event: %w", errno)
		}
		if ev != nil {
			return ev, nil
		}
	}
}

// register gives id a uid, if it has none, and puts it in the channel's
// table.
func (ch *EventChannel) register(id *ID) error { return enroll(ch, ch.ids, &id.uid, id) }

func (ch *EventChannel) unregister(id *ID) { forget(ch, ch.ids, id.uid) }

func (ch *EventChannel) lookup(uid uint64) *ID { return find(ch, ch.ids, uid) }

// enroll numbers *uid from the process-wide sequence, if zero, and puts v
// in table (the channel's ids or multicasts) under it, unless the channel
// is closed.
func enroll[T any](ch *EventChannel, table map[uint64]T, uid *uint64, v T) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return errClosed
	}
	if *uid == 0 {
		*uid = nextUID.Add(1)
	}
	table[*uid] = v
	return nil
}

func forget[T any](ch *EventChannel, table map[uint64]T, uid uint64) {
	ch.mu.Lock()
	delete(table, uid)
	ch.mu.Unlock()
}

func find[T any](ch *EventChannel, table map[uint64]T, uid uint64) T {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return table[uid]
}

// dispatch finds the ids of an event and does what the event requires of
// them; nil means the event is dropped.
func (ch *EventChannel) dispatch(r *ucma.EventResp) *Event {
	id := ch.lookup(r.UID)
	if EventType(r.Event) == EventConnectRequest {
		return ch.connectRequest(id, r)
	}
	var mc *Multicast
	if id == nil {
		if mc = ch.lookupMC(r.UID); mc == nil {
			return nil // its id was closed after the kernel reported the event
		}
		id = mc.id
	}
	raw := decodeEvent(r, id.qpType == ib.QPTypeUD)
	ev := &Event{Type: raw.typ, Status: raw.status, ID: id, Multicast: mc, PrivateData: raw.data, Peer: raw.peer}
	if mc != nil && ev.Type == EventMulticastJoin {
		mc.onJoin(ev)
	}
	id.onEvent(ev)
	id.delivered.Add(1)
	return ev
}

// connectRequest makes the new id of an incoming connection.
func (ch *EventChannel) connectRequest(listener *ID, r *ucma.EventResp) *Event {
	if listener == nil {
		// The listener was closed after the kernel reported the request:
		// the new kernel id is nobody's.
		ch.destroyHandle(r.ID)
		return nil
	}
	raw := decodeEvent(r, listener.qpType == ib.QPTypeUD)
	child := &ID{ch: ch, handle: r.ID, ps: listener.ps, qpType: listener.qpType, peer: raw.peer, peerData: raw.data,
		initiatorDepth: raw.peer.InitiatorDepth, responderResources: raw.peer.ResponderResources}
	if err := ch.register(child); err != nil {
		ch.destroyHandle(r.ID)
		return nil
	}
	if _, err := child.queryAddr(); err != nil {
		// As librdmacm: an id that cannot be bound to its device is
		// destroyed (the peer sees a reject) and the event skipped.
		child.Close()
		return nil
	}
	ev := &Event{Type: raw.typ, Status: raw.status, ID: child, Listen: listener, PrivateData: raw.data, Peer: raw.peer}
	child.delivered.Add(1)
	return ev
}

// destroyHandle destroys a kernel id that has no ID.
func (ch *EventChannel) destroyHandle(h uint32) {
	req := ucma.DestroyID{ID: h}
	var resp ucma.DestroyIDResp
	ch.write("destroy id", ucma.RDMA_USER_CM_CMD_DESTROY_ID, kabi.Bytes(&req), 0, kabi.Bytes(&resp))
}

// Close destroys every id still open on the channel (their QPs too) and
// closes the file, which wakes every GetEvent (with an error matching
// os.ErrClosed). From the moment Close begins no id can be created on,
// accepted onto or migrated to the channel, so none escapes it. Safe to
// call more than once and from several goroutines at once: every call
// returns once the first is done, with its result.
func (ch *EventChannel) Close() error {
	ch.closeOnce.Do(func() { ch.closeErr = ch.close() })
	return ch.closeErr
}

func (ch *EventChannel) close() error {
	ch.mu.Lock()
	ch.closed = true
	ids := make([]*ID, 0, len(ch.ids))
	for _, id := range ch.ids {
		ids = append(ids, id)
	}
	ch.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, id.destroy(ch))
	}
	errs = append(errs, ch.fd.Close())
	return errors.Join(errs...)
}
