package rsocket

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// ListenConfig holds the options of Listen (rsocket, rbind, rlisten).
type ListenConfig struct {
	// Backlog is the kernel's queue of connection requests not yet
	// read by the listener, which reads them as they come; 0 or less
	// means the most (net.rdma_ucm.max_backlog).
	Backlog int
	// KeepAlive is the accepted connections' keepalive interval, as
	// Dialer's.
	KeepAlive time.Duration
	// PollTime is the accepted connections' polling time, as Dialer's.
	PollTime time.Duration
	// HandshakeTimeout bounds each connection's handshake, from its
	// request to the client's RTU (ESTABLISHED), or on iWARP, where the
	// connection is established first, to its first message: a client
	// that stalls is rejected (on iWARP disconnected) and everything made
	// for it freed. 0 or less means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxHandshakes bounds the connections the listener holds before
	// Accept takes them, handshaking or established: a request beyond
	// it is rejected at once (the client's dial fails with
	// ECONNREFUSED). 0 or less means DefaultMaxHandshakes.
	MaxHandshakes int

	// ReadBuffer, WriteBuffer, SendQueue, RecvQueue and Inline size the
	// accepted connections, as Dialer's: rsockets' accepted sockets take
	// the listening socket's options.
	ReadBuffer, WriteBuffer int
	SendQueue, RecvQueue    int
	Inline                  int
	// Control, if set, is called with the listening id once it is made,
	// before it is bound: the place for id.SetOption (REUSEADDR, AFONLY,
	// TOS). An error fails Listen.
	Control func(id *rdma.ID) error
	// IOMapSize is the accepted connections' iomap size, as Dialer's.
	IOMapSize int
	// AckTimeout is the accepted connections' ACK timeout, as Dialer's:
	// set on each connection's id before it accepts (rdma_cm applies it
	// to the QP it moves to RTS; the listening id's is not inherited).
	// Their retry count is the dialer's, which the request carries: a
	// Dialer's RetryCount, 7 from rsockets' C dialers.
	AckTimeout time.Duration
	// FailureBound is the accepted connections' failure bound, as
	// Dialer's.
	FailureBound time.Duration
}

// Listener accepts rsocket-compatible connections. It implements
// net.Listener.
//
// A goroutine reads the listener's connection requests as they come and
// hands each to a handshake of its own (rs_accept's work: the QP and
// buffers, the accept, the wait for ESTABLISHED), bounded by
// ListenConfig's HandshakeTimeout; established connections wait in a
// queue for Accept. A client that never completes its handshake thus
// delays nobody else.
type Listener struct {
	id    *rdma.ID
	ch    *rdma.EventChannel
	addr  *Addr
	opts  connOpts  // the accepted connections' keepalive, polling and failure bound
	sizes rsSizes   // of the accepted connections
	dl    *deadline // Accept's

	iomap int           // entries of the accepted connections' iomap arrays
	ackTO time.Duration // the accepted connections' AckTimeout

	hs       *rsHandshakes[*Conn]
	loopDone chan struct{} // closed when the request loop ends

	closeOnce sync.Once
	cancel    context.CancelFunc // stops the request loop
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
	aps, err := resolveRS(ctx, network, address)
	if err != nil {
		return nil, opErr(err)
	}
	ap := aps[0] // as net.Listen: the first address
	ch, err := rdma.CreateEventChannel()
	if err != nil {
		return nil, opErr(err)
	}
	id, err := ch.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err == nil {
		err = control(lc.Control, id)
	}
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
	l := &Listener{id: id, ch: ch, addr: AddrFromAddrPort(ap), opts: connOpts{ka: lc.KeepAlive, poll: lc.PollTime, failure: lc.FailureBound, responder: true}, sizes: lc.sizes(), dl: newDeadline(), iomap: rsproto.IOMapEntries(lc.IOMapSize), ackTO: lc.AckTimeout,
		hs:       newRSHandshakes(lc.MaxHandshakes, lc.HandshakeTimeout, func(c *Conn) { c.Close() }),
		loopDone: make(chan struct{})}
	if a, err := id.QueryAddr(); err == nil {
		l.addr = AddrFromAddrPort(a.Src)
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.requests(loopCtx)
	return l, nil
}

// Accept waits for the next connection (net.Listener), until the
// deadline SetDeadline set (an error matching os.ErrDeadlineExceeded).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.acceptDeadline()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AcceptConn waits for the next established connection, until ctx ends
// or the listener is closed (an error matching net.ErrClosed). Requests
// are accepted as rsocket's rs_accept does, each in a handshake of its
// own: one with other than rsocket version 1 connection data is rejected
// at once, one whose handshake fails or times out is dropped, and the
// wait goes on. When the listener's device goes away it fails with
// ErrDeviceRemoved.
func (l *Listener) AcceptConn(ctx context.Context) (*Conn, error) {
	c, err := l.hs.accept(ctx)
	if err != nil {
		return nil, &net.OpError{Op: "accept", Net: "rdma", Addr: l.addr, Err: err}
	}
	return c, nil
}

// requests reads the listener's channel until Close, and starts a
// handshake for each connection request.
func (l *Listener) requests(ctx context.Context) {
	defer close(l.loopDone)
	for {
		ev, err := l.ch.GetEvent(ctx)
		if err != nil {
			if ctx.Err() == nil {
				l.hs.fail(err) // the channel failed: no request will come
			}
			return
		}
		ev.Ack()
		if ev.Type == rdma.EventDeviceRemoval && ev.ID == l.id {
			l.hs.fail(rdma.ErrDeviceRemoved)
			return
		}
		if ev.Type != rdma.EventConnectRequest || ev.Listen != l.id {
			// An event of a request not yet migrated to its own
			// channel (its device went away): the handshake, if any,
			// finds the id closed.
			if ev.ID != nil && ev.ID != l.id {
				ev.ID.Close()
			}
			continue
		}
		child := ev.ID
		peer, err := rsproto.UnmarshalConnData(ev.PrivateData)
		if err == nil {
			err = l.hs.start(func(ctx context.Context) (*Conn, error) { return l.handshake(ctx, child, peer) })
		}
		if err != nil {
			child.Reject(nil)
			child.Close()
		}
	}
}

// handshake accepts the request that made child, with the peer's
// connection data, and waits for ESTABLISHED until ctx ends. When it
// fails, child and everything made for it are gone.
func (l *Listener) handshake(ctx context.Context, child *rdma.ID, peer rsproto.ConnData) (_ *Conn, err error) {
	var res rsResources
	accepted, running := false, false
	defer func() {
		if err != nil && !running {
			// Closing the id rejects the request. Before the accept an
			// explicit reject says the same; after it, a REJECT would
			// leave the kernel retrying its REP for a minute (DESTROY_ID
			// then waits for that), where DESTROY_ID alone cancels it.
			if !accepted {
				err = errors.Join(err, child.Reject(nil))
			}
			err = errors.Join(err, child.Close(), res.close())
		}
	}()
	// The child's events (ESTABLISHED, DISCONNECTED) come on a channel
	// of its own, so that its handshake waits only for its own.
	if err := child.Migrate(nil); err != nil {
		return nil, err
	}
	if err := setAckTimeout(child, l.ackTO); err != nil {
		return nil, err
	}
	res.iomapSize = l.iomap
	if err := res.setup(child, l.sizes); err != nil {
		return nil, err
	}
	c := newConn(child, nil, res)
	cd := c.ourConnData()
	if err := ctx.Err(); err != nil {
		return nil, err // Close came during the setup: no REP to send
	}
	accepted = true
	// No RetryCount: the QP takes the request's, the dialer's (a reply
	// carries none).
	if err := child.Accept(ctx, &rdma.ConnParam{PrivateData: cd.Marshal(), FlowControl: 1, RNRRetryCount: 7,
		PeerPathMTU: peerPathMTU}); err != nil {
		return nil, err
	}
	c.run(peer, l.opts)
	running = true
	// On iWARP the connection is established before the client says
	// anything; its first message (mute lifted) ends the handshake.
	if err := c.awaitInitiator(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("rdma: the client's first message: %w", err), c.close())
	}
	return c, nil
}

// Close stops listening: a blocked Accept returns an error matching
// net.ErrClosed, the handshakes in progress are abandoned (their clients
// rejected) and the connections established but not accepted closed.
// Connections accepted before stay open. Safe to call more than once.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.cancel()
		<-l.loopDone
		l.hs.close()
		l.dl.stop()
		if err := errors.Join(l.id.Close(), l.ch.Close()); err != nil {
			l.closeErr = &net.OpError{Op: "close", Net: "rdma", Addr: l.addr, Err: err}
		}
	})
	return l.closeErr
}

// Addr is the address the listener is bound to (net.Listener).
func (l *Listener) Addr() net.Addr { return l.addr }

var _ net.Listener = (*Listener)(nil)
