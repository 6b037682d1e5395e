package rdma

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// ListenConfig holds the options of Listen (rsocket, rbind, rlisten).
type ListenConfig struct {
	// Backlog is the kernel's queue of connection requests not yet
	// accepted; 0 or less means the most (net.rdma_ucm.max_backlog).
	Backlog int
	// KeepAlive is the accepted connections' keepalive interval, as
	// Dialer's.
	KeepAlive time.Duration
	// PollTime is the accepted connections' polling time, as Dialer's.
	PollTime time.Duration
}

// Listener accepts rsocket-compatible connections. It implements
// net.Listener.
type Listener struct {
	id   *ID
	ch   *EventChannel
	addr *Addr
	ka   time.Duration
	poll time.Duration

	mu        sync.Mutex // serializes Accepts
	closeOnce sync.Once
	closed    chan struct{}
	cancel    context.CancelFunc
	ctx       context.Context
	closeErr  error
}

// Listen listens on address ("host:port"; an empty host or a wildcard
// address is every address) with the zero ListenConfig.
func Listen(network, address string) (*Listener, error) {
	var lc ListenConfig
	return lc.Listen(context.Background(), network, address)
}

// Listen listens on address on network "rdma", "rdma4" or "rdma6". ctx
// bounds only the name lookup.
func (lc *ListenConfig) Listen(ctx context.Context, network, address string) (*Listener, error) {
	opErr := func(err error) error { return &net.OpError{Op: "listen", Net: network, Err: err} }
	ap, err := resolveRS(ctx, network, address)
	if err != nil {
		return nil, opErr(err)
	}
	ch, err := CreateEventChannel()
	if err != nil {
		return nil, opErr(err)
	}
	id, err := ch.CreateID(PortSpaceTCP, ib.QPTypeRC)
	if err == nil {
		err = id.Bind(ap)
	}
	if err == nil {
		err = id.Listen(lc.Backlog)
	}
	if err != nil {
		if id != nil {
			err = errors.Join(err, id.Close())
		}
		return nil, opErr(errors.Join(err, ch.Close()))
	}
	l := &Listener{id: id, ch: ch, addr: &Addr{ap}, ka: lc.KeepAlive, poll: lc.PollTime, closed: make(chan struct{})}
	if a, err := id.QueryAddr(); err == nil {
		l.addr = &Addr{a.Src}
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

// Accept waits for the next connection (net.Listener).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptConn(context.Background())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AcceptConn waits for the next connection request, until ctx ends or
// the listener is closed (an error matching net.ErrClosed), and accepts
// it as rsocket's rs_accept does: a request with other than rsocket
// version 1 connection data is rejected and the wait goes on. When the
// listener's device goes away it fails with ErrDeviceRemoved.
func (l *Listener) AcceptConn(ctx context.Context) (*Conn, error) {
	opErr := func(err error) error {
		return &net.OpError{Op: "accept", Net: "rdma", Addr: l.addr, Err: err}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, stop := mergeCancel(ctx, l.ctx)
	defer stop()
	for {
		if isClosed(l.closed) {
			return nil, opErr(net.ErrClosed)
		}
		ev, err := l.ch.GetEvent(ctx)
		if err != nil {
			if isClosed(l.closed) {
				return nil, opErr(net.ErrClosed)
			}
			return nil, opErr(err)
		}
		ev.Ack()
		if ev.Type == EventDeviceRemoval && ev.ID == l.id {
			return nil, opErr(ErrDeviceRemoved)
		}
		if ev.Type != EventConnectRequest || ev.Listen != l.id {
			if ev.ID != nil && ev.ID != l.id {
				ev.ID.Close()
			}
			continue
		}
		c, err := l.accept(ctx, ev)
		if err != nil {
			if ctx.Err() != nil {
				return nil, opErr(err)
			}
			continue // this request failed; wait for the next
		}
		return c, nil
	}
}

func (l *Listener) accept(ctx context.Context, ev *Event) (_ *Conn, err error) {
	child := ev.ID
	peer, err := rsproto.UnmarshalConnData(ev.PrivateData)
	if err != nil {
		return nil, errors.Join(err, child.Reject(nil), child.Close())
	}
	var res rsResources
	defer func() {
		if err != nil {
			err = errors.Join(err, child.Reject(nil), child.Close(), res.close())
		}
	}()
	// The child's events (ESTABLISHED, DISCONNECTED) come on a channel
	// of its own, so that Accept waits only for its own.
	if err := child.Migrate(nil); err != nil {
		return nil, err
	}
	if err := res.setup(child); err != nil {
		return nil, err
	}
	c := newConn(child, nil, res)
	cd := c.ourConnData()
	if err := child.Accept(ctx, &ConnParam{PrivateData: cd.Marshal(), FlowControl: 1, RetryCount: 7, RNRRetryCount: 7}); err != nil {
		return nil, err
	}
	c.run(peer, l.ka, l.poll)
	return c, nil
}

// mergeCancel is ctx, also cancelled when other is.
func mergeCancel(ctx, other context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(other, cancel)
	return ctx, func() { stop(); cancel() }
}

// Close stops listening; a blocked Accept returns an error matching
// net.ErrClosed. Connections accepted before stay open. Safe to call
// more than once.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.cancel()
		l.mu.Lock() // wait for a running Accept to leave
		defer l.mu.Unlock()
		if err := errors.Join(l.id.Close(), l.ch.Close()); err != nil {
			l.closeErr = &net.OpError{Op: "close", Net: "rdma", Addr: l.addr, Err: err}
		}
	})
	return l.closeErr
}

// Addr is the address the listener is bound to (net.Listener).
func (l *Listener) Addr() net.Addr { return l.addr }

var _ net.Listener = (*Listener)(nil)
