package device

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/internal/netns"
	"github.com/rdmastack/rdmastack/internal/nlwatch"
	"github.com/rdmastack/rdmastack/internal/uevent"
	"github.com/rdmastack/rdmastack/nldev"
)

// pollEvery is how often a watcher reads the kernel when no event can
// tell it: for ports whose state hardware changes without an event, and
// where uevents are not delivered at all.
const pollEvery = 2 * time.Second

// Update is what a Watcher delivers: the devices now, and what changed
// since the update before (for the first, every device as Added).
// Updates the consumer was too slow to take are merged: Changes then
// span them all, computed against the last snapshot it took.
type Update struct {
	Snapshot *Snapshot
	Changes  []Change

	base *Snapshot // what Changes were computed against
}

// Watcher streams the RDMA devices of one network namespace as they
// change. Updates never block it: a consumer that falls behind gets one
// update that sums up what it missed. Close, or the end of the context
// Watch was given, stops it and releases every goroutine and socket.
type Watcher struct {
	ch     chan Update
	cancel context.CancelFunc
	done   chan struct{}
	closed atomic.Bool
	mu     sync.Mutex
	err    error
}

// Watch watches the RDMA devices of the caller's network namespace,
// woken by the kernel's events (uevents for devices, rtnetlink link
// events for the netdevs rxe's and siw's ports follow, and RDMA
// netlink's monitor where the kernel has it, Linux 6.12) and reading the
// kernel at least every two seconds for what no event covers. The first
// update comes at once.
func Watch(ctx context.Context) (*Watcher, error) { return watch(ctx, -1) }

// WatchNetNS is Watch for the network namespace ns: its sockets are
// opened inside it, on a thread that joins it for that moment only.
func WatchNetNS(ctx context.Context, ns NetNS) (*Watcher, error) {
	fd, _, release, err := ns.open()
	if err != nil {
		return nil, fmt.Errorf("device: watch netns %s: %w", ns, err)
	}
	defer release()
	return watch(ctx, fd)
}

// watchSockets are one namespace's sockets.
type watchSockets struct {
	nl    inventorySource
	ev    *uevent.Conn  // nil where uevents are not delivered
	links *nlwatch.Conn // nil with ev
	// mon is RDMA netlink's monitor (Linux 6.12): devices registered,
	// unregistered and renamed, netdevs attached and detached, told in
	// the namespace itself, where uevents may not be delivered (a
	// namespace of another user namespace). nil on older kernels, or
	// where the group cannot be joined.
	mon *nldev.Monitor
}

// inventorySource is what a watcher asks; *nldev.Client is one, tests
// give a fake.
type inventorySource interface {
	Inventory() (*nldev.Inventory, error)
	Close() error
}

func (s *watchSockets) close() {
	if s.nl != nil {
		s.nl.Close()
	}
	s.ev.Close()
	s.links.Close()
	s.mon.Close()
}

// open opens the sockets in the calling thread's namespace, the event
// sockets first so that nothing between them and the first inventory
// goes unseen.
func (s *watchSockets) open() error {
	if s.ev = uevent.ListenIfDelivered(); s.ev != nil {
		var err error
		if s.links, err = nlwatch.Listen(unix.NETLINK_ROUTE, unix.RTMGRP_LINK); err != nil {
			s.ev.Close()
			s.ev = nil
		}
	}
	// The monitor is a wake-up like the others: without it the poll
	// still finds every change.
	s.mon, _ = nldev.DialMonitor()
	c, err := nldev.Dial()
	if err != nil {
		s.close()
		return err
	}
	s.nl = c
	return nil
}

func watch(ctx context.Context, nsfd int) (*Watcher, error) {
	const op = "device: watch"
	var s watchSockets
	var err error
	if nsfd >= 0 {
		err = netns.Do(nsfd, s.open)
	} else {
		err = s.open()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return start(ctx, &s, pollEvery)
}

// start takes the first inventory and starts the watcher on s.
func start(ctx context.Context, s *watchSockets, every time.Duration) (*Watcher, error) {
	first, err := s.nl.Inventory()
	if err != nil {
		s.close()
		return nil, fmt.Errorf("device: watch: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{ch: make(chan Update, 1), cancel: cancel, done: make(chan struct{})}
	snap := join(global.fs, devcache.Join(global.fs.FS, first))
	w.ch <- Update{Snapshot: snap, Changes: diff(nil, snap)}
	go w.run(ctx, s, snap, every)
	return w, nil
}

// Updates is the stream of updates. It is closed when the watcher stops;
// Err then says why.
func (w *Watcher) Updates() <-chan Update { return w.ch }

// Err is why the watcher stopped: nil while it runs and after Close,
// the context's error when it ended, or the kernel's.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close stops the watcher and waits until its goroutines and sockets are
// gone. Closing twice is harmless.
func (w *Watcher) Close() error {
	w.closed.Store(true)
	w.cancel()
	<-w.done
	return nil
}

func (w *Watcher) stop(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

// run waits for events and delivers the snapshots they lead to.
func (w *Watcher) run(ctx context.Context, s *watchSockets, sent *Snapshot, every time.Duration) {
	defer close(w.done)
	defer close(w.ch)
	kick := make(chan bool, 1) // true: a netdev changed, the ports settle
	var wg sync.WaitGroup
	waiter := func(wait func(context.Context) error, settle bool) {
		defer wg.Done()
		for {
			if err := wait(ctx); err != nil {
				return // ctx ended, or the socket failed: the poll goes on
			}
			select {
			case kick <- settle:
			default:
			}
		}
	}
	if s.ev != nil {
		wg.Add(2)
		go waiter(s.ev.Wait, false)
		go waiter(func(ctx context.Context) error { return s.links.Wait(ctx, nil) }, true)
	}
	if s.mon != nil {
		// A netdev attached or detached: the ports settle as after a
		// link event.
		wg.Add(1)
		go waiter(func(ctx context.Context) error { _, err := s.mon.Receive(ctx); return err }, true)
	}
	defer func() {
		// Waits return once ctx ends; only then may the sockets close.
		wg.Wait()
		s.close()
	}()
	defer w.cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if !w.closed.Load() {
				w.stop(ctx.Err())
			}
			return
		case again := <-kick:
			if again {
				settle = time.After(settleWatch)
			}
		case <-settle:
			settle = nil
		case <-tick.C:
		}
		inv, err := s.nl.Inventory()
		if err != nil {
			w.stop(fmt.Errorf("device: watch: %w", err))
			return
		}
		sent = w.deliver(sent, join(global.fs, devcache.Join(global.fs.FS, inv)))
	}
}

// settleWatch is how long after a netdev event a watcher reads the ports
// once more (devcache.Settle: rxe's ports change just after).
const settleWatch = devcache.Settle

// deliver hands cur to the consumer without waiting: an update it has
// not taken yet is taken back and merged, its changes recomputed against
// the snapshot the consumer saw last. It returns what is now in flight.
func (w *Watcher) deliver(sent, cur *Snapshot) *Snapshot {
	base := sent
	select {
	case old := <-w.ch:
		base = old.base
	default:
	}
	changes := diff(base, cur)
	if len(changes) == 0 && base != nil {
		// Nothing new; or a pending update whose changes undid
		// themselves, and nothing is pending any more.
		return base
	}
	w.ch <- Update{Snapshot: cur, Changes: changes, base: base}
	return cur
}
