package rdma

import (
	"context"
	"errors"
	"fmt"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// waiters runs n goroutines that read ch's events until it is closed,
// each event handed to handle; wait returns once all have ended, failing
// the test unless each ended with an error matching os.ErrClosed.
func waiters(t *testing.T, ch *EventChannel, n int, handle func(*Event)) (wait func()) {
	t.Helper()
	errs := make(chan error, n)
	for range n {
		go func() {
			for {
				ev, err := ch.GetEvent(context.Background())
				if err != nil {
					errs <- err
					return
				}
				ev.Ack()
				handle(ev)
			}
		}()
	}
	return func() {
		t.Helper()
		for range n {
			select {
			case err := <-errs:
				if !errors.Is(err, os.ErrClosed) {
					t.Errorf("a waiter ended with %v, want an error matching os.ErrClosed", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a waiter was not woken by Close")
			}
		}
	}
}

// tally counts events by id and type, and signals when want of them
// have come.
type tally struct {
	mu    sync.Mutex
	seen  map[*ID]map[EventType]int
	n     int
	want  int
	full  chan struct{}
	extra []string
}

func newTally(want int) *tally {
	return &tally{seen: map[*ID]map[EventType]int{}, want: want, full: make(chan struct{})}
}

func (c *tally) add(id *ID, typ EventType) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[id] == nil {
		c.seen[id] = map[EventType]int{}
	}
	c.seen[id][typ]++
	if c.n++; c.n == c.want {
		close(c.full)
	}
}

func (c *tally) unexpected(format string, args ...any) {
	c.mu.Lock()
	c.extra = append(c.extra, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

// await waits for want events, then a moment for any beyond them.
func (c *tally) await(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.full:
	case <-time.After(60 * time.Second):
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("%s: %d of %d events came (lost: %v)", what, c.n, c.want, c.seen)
	}
	time.Sleep(200 * time.Millisecond)
}

// exactly checks that each id got each of types exactly once, and
// nothing else.
func (c *tally) exactly(t *testing.T, what string, ids []*ID, types ...EventType) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.extra) > 0 {
		t.Errorf("%s: unexpected events: %v", what, c.extra)
	}
	if c.n != len(ids)*len(types) {
		t.Errorf("%s: %d events for %d ids × %d types", what, c.n, len(ids), len(types))
	}
	for i, id := range ids {
		for _, typ := range types {
			if got := c.seen[id][typ]; got != 1 {
				t.Errorf("%s: id %d got %v %d times, want once", what, i, typ, got)
			}
		}
	}
}

// TestIntegrationCMConcurrentWaiters: 8 goroutines wait on one client
// channel and 8 on one server channel while 24 clients resolve, connect
// and are rejected: each event (ADDR_RESOLVED, ROUTE_RESOLVED,
// CONNECT_REQUEST, REJECTED) is delivered exactly once, none lost, and
// what it requires (binding the id to its device, making the request's
// new id) is done before it is handed out; Close then wakes every waiter.
func TestIntegrationCMConcurrentWaiters(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	const clients, nwait = 24, 8
	sch, cch := newChannel(t), newChannel(t)
	_, dst := listen(t, sch, addr)

	ids := make([]*ID, clients)
	index := map[*ID]int{}
	for i := range ids {
		ids[i] = newID(t, cch)
		index[ids[i]] = i
	}
	cli := newTally(3 * clients)
	srv := newTally(clients)
	var reqMu sync.Mutex
	requests := make([]int, clients) // CONNECT_REQUESTs by the client index in their private data

	stopS := waiters(t, sch, nwait, func(ev *Event) {
		if ev.Type != EventConnectRequest || ev.Listen == nil || ev.ID == nil || len(ev.PrivateData) == 0 {
			srv.unexpected("%v (status %v)", ev.Type, ev.Status)
			return
		}
		if ev.ID.Device() == nil {
			srv.unexpected("CONNECT_REQUEST's new id has no device")
		}
		if i := int(ev.PrivateData[0]); i < clients {
			reqMu.Lock()
			requests[i]++
			reqMu.Unlock()
		}
		if err := errors.Join(ev.ID.Reject(nil), ev.ID.Close()); err != nil {
			srv.unexpected("reject: %v", err)
		}
		srv.add(ev.Listen, ev.Type)
	})
	stopC := waiters(t, cch, nwait, func(ev *Event) {
		i, ok := index[ev.ID]
		if !ok {
			cli.unexpected("%v for an id not made here", ev.Type)
			return
		}
		var err error
		switch ev.Type {
		case EventAddrResolved:
			if ev.ID.Device() == nil {
				err = errors.New("no device after ADDR_RESOLVED")
			} else {
				err = ev.ID.ResolveRoute(context.Background(), 5*time.Second)
			}
		case EventRouteResolved:
			err = ev.ID.Connect(context.Background(), &ConnParam{PrivateData: []byte{byte(i)}, QPNum: uint32(0x100 + i),
				RetryCount: 7, RNRRetryCount: 7})
		case EventRejected:
			if !errors.Is(ev.Status, unix.ECONNREFUSED) {
				err = fmt.Errorf("REJECTED with status %v", ev.Status)
			}
		default:
			err = fmt.Errorf("%v (status %v)", ev.Type, ev.Status)
		}
		if err != nil {
			cli.unexpected("client %d: %v", i, err)
		}
		cli.add(ev.ID, ev.Type)
	})
	for _, id := range ids {
		if err := id.ResolveAddr(context.Background(), netip.AddrPort{}, dst, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	cli.await(t, "client")
	srv.await(t, "server")
	cli.exactly(t, "client", ids, EventAddrResolved, EventRouteResolved, EventRejected)
	for i, n := range requests {
		if n != 1 {
			t.Errorf("client %d's CONNECT_REQUEST came %d times, want once", i, n)
		}
	}
	if srv.n != clients {
		t.Errorf("%d CONNECT_REQUESTs for %d clients", srv.n, clients)
	}
	for _, id := range ids {
		if n := id.UnackedEvents(); n != 0 {
			t.Errorf("an id has %d unacknowledged events", n)
		}
	}
	// Close wakes the waiters still parked (with os.ErrClosed).
	if err := errors.Join(cch.Close(), sch.Close()); err != nil {
		t.Fatal(err)
	}
	stopC()
	stopS()
	for _, id := range ids {
		if err := id.Bind(netip.AddrPortFrom(addr, 0)); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Bind on an id of a closed channel: %v", err)
		}
	}
}

// TestIntegrationCMCloseConcurrent: 8 Closes of one channel at once,
// while 8 goroutines wait in GetEvent and its ids hold QPs: every Close
// returns, with the same result, every wait ends with an error matching
// os.ErrClosed, and the ids, their QPs and the file are gone.
func TestIntegrationCMCloseConcurrent(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	for round := range 10 {
		ch, err := CreateEventChannel()
		if err != nil {
			t.Fatal(err)
		}
		var ids []*ID
		for range 4 {
			id, err := ch.CreateID(PortSpaceTCP, ib.QPTypeRC)
			if err != nil {
				t.Fatal(err)
			}
			if err := id.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
				t.Fatal(err)
			}
			newEndpoint(t, id)
			ids = append(ids, id)
		}
		stop := waiters(t, ch, 8, func(ev *Event) { t.Errorf("an event on an idle channel: %v", ev.Type) })
		time.Sleep(20 * time.Millisecond)
		errs := make([]error, 8)
		var fns []func()
		for i := range errs {
			fns = append(fns, func() { errs[i] = ch.Close() })
		}
		testenv.Together(fns...)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: Close %d: %v", round, i, err)
			}
		}
		stop()
		for _, id := range ids {
			if id.QP() != nil {
				t.Fatal("an id of the closed channel still has its QP")
			}
			if err := id.Listen(0); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("Listen on an id of the closed channel: %v", err)
			}
		}
		if _, err := ch.GetEvent(context.Background()); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("GetEvent on the closed channel: %v", err)
		}
	}
}

// TestIntegrationCMIDCloseConcurrent: 8 Closes of one synchronous id at
// once, with a QP and a GetEvent waiting on its own channel: all return
// nil, the wait ends with os.ErrClosed, and nothing is left.
func TestIntegrationCMIDCloseConcurrent(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	for round := range 10 {
		id, err := CreateID(PortSpaceTCP, ib.QPTypeRC)
		if err != nil {
			t.Fatal(err)
		}
		if err := id.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
			t.Fatal(err)
		}
		newEndpoint(t, id)
		stop := waiters(t, id.Channel(), 1, func(ev *Event) { t.Errorf("an event on an idle id: %v", ev.Type) })
		time.Sleep(20 * time.Millisecond)
		errs := make([]error, 8)
		var fns []func()
		for i := range errs {
			fns = append(fns, func() { errs[i] = id.Close() })
		}
		testenv.Together(fns...)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: Close %d: %v", round, i, err)
			}
		}
		stop()
	}
}

// TestIntegrationCMCreateIDRacesClose: ids created while their channel
// closes either fail with os.ErrClosed or are destroyed by the Close:
// Close reports no error (it never destroys a kernel id not yet made),
// and no kernel id outlives it.
func TestIntegrationCMCreateIDRacesClose(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	for round := range 20 {
		ch, err := CreateEventChannel()
		if err != nil {
			t.Fatal(err)
		}
		const makers = 4
		var mu sync.Mutex
		var made []*ID
		var closeErr error
		fns := []func(){func() {
			time.Sleep(time.Duration(round%5) * time.Millisecond)
			closeErr = ch.Close()
		}}
		for range makers {
			fns = append(fns, func() {
				for {
					id, err := ch.CreateID(PortSpaceTCP, ib.QPTypeRC)
					if err != nil {
						if !errors.Is(err, os.ErrClosed) {
							t.Errorf("CreateID racing Close: %v", err)
						}
						return
					}
					mu.Lock()
					made = append(made, id)
					mu.Unlock()
				}
			})
		}
		testenv.Together(fns...)
		if closeErr != nil {
			t.Fatalf("round %d: Close racing CreateID: %v", round, closeErr)
		}
		for _, id := range made {
			if err := id.Bind(netip.AddrPortFrom(addr, 0)); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("round %d: an id made before Close survived it: Bind %v", round, err)
			}
		}
		ch.mu.Lock()
		left := len(ch.ids)
		ch.mu.Unlock()
		if left != 0 {
			t.Fatalf("round %d: the closed channel still lists %d ids", round, left)
		}
	}
}
