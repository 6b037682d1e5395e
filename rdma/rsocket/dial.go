package rsocket

import (
	"context"
	"errors"
	"fmt"
	"github.com/rdmastack/rdmastack/rdma"
	"net"
	"net/netip"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// Dialer holds the options of Dial (rsocket, rbind, rconnect).
type Dialer struct {
	// Timeout bounds the whole dial (resolution and connection); 0 means
	// no bound other than the context's. Without one, a dial whose
	// packets are lost ends when the kernel gives up: resolution after
	// ResolveTimeout (each of address and route), the connection
	// request after its 15 resends, each 2^(lifetime-7) + 4096 ms after
	// the last (the route's packet lifetime is AckTimeout's exponent
	// less 1: 4.6s with the default, about 74s in all), with an error
	// matching unix.ETIMEDOUT. A dial that Timeout or the context's deadline
	// ends fails with an error matching os.ErrDeadlineExceeded (and
	// context.DeadlineExceeded).
	Timeout time.Duration
	// LocalAddr, an *Addr (or *net.TCPAddr), is the address to bind to;
	// nil lets the route choose.
	LocalAddr net.Addr
	// KeepAlive is the interval of keepalive probes (rsocket's 0-byte
	// RDMA writes, whose failure reveals a dead peer): 0 means 15s, < 0
	// none.
	KeepAlive time.Duration
	// ResolveTimeout bounds address and route resolution each; 0 means
	// 2s, as librdmacm's tools use.
	ResolveTimeout time.Duration
	// PollTime is how long a Read or Write that must wait polls the
	// completion queue before it sleeps (rsockets' polling_time): a wait
	// that sleeps costs the thread a switch, which small messages feel.
	// It is a bound on each wait, never a spin while idle: 0 means
	// DefaultPollTime, < 0 no polling.
	PollTime time.Duration

	// ReadBuffer sizes the receive buffer the peer writes into, as
	// SO_RCVBUF before rconnect: twice ReadBuffer bytes, at least 4 KiB
	// and at most 1 GiB; 0 means rsockets' 128 KiB. The peer learns half
	// of it as each credit of buffer space it may fill.
	ReadBuffer int
	// WriteBuffer sizes the send buffer likewise (SO_SNDBUF): the data
	// this side has in flight.
	WriteBuffer int
	// SendQueue and RecvQueue are the QP's send and receive queue sizes
	// (RDMA_SQSIZE, RDMA_RQSIZE): 0 means rsockets' 384; the device's
	// limit and rsockets' bounds (16 to 65534) apply. The receive queue
	// is the peer's credit of messages in flight.
	SendQueue, RecvQueue int
	// Inline is the largest send that goes inline in its work request
	// (RDMA_INLINE, IBV_SEND_INLINE), as far as the device takes it: 0
	// means rsockets' 64 bytes, < 0 none.
	Inline int
	// Control, if set, is called with each connection's id once it is
	// made, before it is bound, resolved or connected: the place for
	// id.SetOption (TOS, ACK_TIMEOUT, REUSEADDR, AFONLY), as setsockopt
	// between rsocket and rconnect. An error fails that address's dial
	// and frees the id.
	Control func(id *rdma.ID) error
	// IOMapSize is how many windows (Mapping) the peer may give this
	// side to WriteAt into: rsockets' RDMA_IOMAPSIZE, rounded as they
	// round it (rsproto scale: up to 128, then multiples of 256). 0
	// means none, rsockets' default.
	IOMapSize int

	// AckTimeout is the RC transport's ACK timeout on this side: how
	// long a sent packet waits for its acknowledgement before it is
	// sent again (rdma.OptionAckTimeout, set before route resolution,
	// so that the request carries it as the packet lifetime). The QP
	// takes the smallest 4.096 µs × 2^n at least as long, n from 1 to
	// 31. 0 means DefaultAckTimeout, < 0 the kernel's (from the route:
	// on RoCE about 0.5 s on Linux 6.12, 2.1 s on 6.1). Control may
	// set the option again.
	AckTimeout time.Duration
	// RetryCount is how many times the transport sends a packet again
	// before it gives up, at most 7, on both sides: the connection
	// request carries it, and the peer's QP takes it too (an rdma_cm
	// acceptor has no say). 0 means DefaultRetryCount (7, as rsockets
	// asks, which rxe takes for "retry for ever"), < 0 none.
	//
	// Together with AckTimeout it makes the default failure bound.
	RetryCount int
	// FailureBound is how long the connection's sends may go
	// unacknowledged before it fails with ErrPeerSilent, whatever the
	// transport's retries (as TCP_USER_TIMEOUT for TCP). 0 means twice
	// the transport's own budget as the QP has it, 2 × (RetryCount+1)
	// × AckTimeout: DefaultFailureBound with the defaults. < 0 means
	// none: the transport's retries alone, which on rxe at 7 retries
	// never end. See the package documentation.
	FailureBound time.Duration
}

// Dial connects to address ("host:port") on network "rdma", "rdma4" or
// "rdma6" with the zero Dialer.
func Dial(network, address string) (*Conn, error) {
	var d Dialer
	return d.DialContext(context.Background(), network, address)
}

// DialContext is Dial with a context that bounds the dial.
func DialContext(ctx context.Context, network, address string) (*Conn, error) {
	var d Dialer
	return d.DialContext(ctx, network, address)
}

// DialContext connects to address as rsocket's rconnect does: resolve the
// address and the route, make the QP and buffers, and connect with the
// rsocket connection data; the peer must be an rsocket listener (Listen,
// or rsocket(3)'s rlisten). Errors are *net.OpError; a refused
// connection matches unix.ECONNREFUSED.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (*Conn, error) {
	opErr := func(addr net.Addr, err error) error {
		return &net.OpError{Op: "dial", Net: network, Source: d.LocalAddr, Addr: addr, Err: err}
	}
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	dsts, err := resolveRS(ctx, network, address)
	if err != nil {
		return nil, opErr(nil, err)
	}
	src, err := addrPortOf(d.LocalAddr)
	if err != nil {
		return nil, opErr(AddrFromAddrPort(dsts[0]), err)
	}
	// As net.Dialer: the addresses in turn, each with an equal share of
	// the time left, until one connects; the first error is reported.
	var first error
	for i, dst := range dsts {
		if src.IsValid() && src.Addr().Is4() != dst.Addr().Is4() {
			continue // the bound address's family cannot reach it
		}
		actx, cancel := partialDeadline(ctx, len(dsts)-i)
		c, err := d.dial(actx, src, dst)
		cancel()
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = opErr(AddrFromAddrPort(dst), err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = opErr(AddrFromAddrPort(dsts[0]), &net.AddrError{Err: "no address of the local address's family", Addr: address})
	}
	return nil, first
}

// partialDeadline gives one of n remaining addresses its share of ctx's
// time left, as net.Dialer does: an equal share, but at least 2s unless
// less is left.
func partialDeadline(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok || n <= 1 {
		return context.WithCancel(ctx)
	}
	left := time.Until(dl)
	share := left / time.Duration(n)
	if share < 2*time.Second {
		share = min(2*time.Second, left)
	}
	return context.WithTimeout(ctx, share)
}

func (d *Dialer) dial(ctx context.Context, src, dst netip.AddrPort) (_ *Conn, err error) {
	rt := d.ResolveTimeout
	if rt <= 0 {
		rt = 2 * time.Second
	}
	ch, err := rdma.CreateEventChannel()
	if err != nil {
		return nil, err
	}
	id, err := ch.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		return nil, errors.Join(err, ch.Close())
	}
	var res rsResources
	defer func() {
		if err != nil {
			err = errors.Join(err, id.Close(), ch.Close(), res.close())
		}
	}()
	retry, err := retryCount(d.RetryCount)
	if err != nil {
		return nil, err
	}
	if err := setAckTimeout(id, d.AckTimeout); err != nil {
		return nil, err
	}
	if err := control(d.Control, id); err != nil {
		return nil, err
	}
	if src.IsValid() {
		if err := id.Bind(src); err != nil {
			return nil, err
		}
	}
	// A bound id resolves from its address: no source to pass again.
	if err := id.ResolveAddr(ctx, netip.AddrPort{}, dst, rt); err != nil {
		return nil, err
	}
	if _, err := awaitEvent(ctx, id, rdma.EventAddrResolved); err != nil {
		return nil, err
	}
	if err := id.ResolveRoute(ctx, rt); err != nil {
		return nil, err
	}
	if _, err := awaitEvent(ctx, id, rdma.EventRouteResolved); err != nil {
		return nil, err
	}
	res.iomapSize = rsproto.IOMapEntries(d.IOMapSize)
	if err := res.setup(id, d.sizes()); err != nil {
		return nil, err
	}
	c := newConn(id, ch, res)
	cd := c.ourConnData()
	cp := rdma.ConnParam{PrivateData: cd.Marshal(), FlowControl: 1, RetryCount: retry, RNRRetryCount: 7,
		PeerPathMTU: peerPathMTU}
	if res.mode == msgSend {
		cp.InitiatorDepth = 1 // as rsockets: an iWARP connection may start with an RDMA READ
	}
	if err := id.Connect(ctx, &cp); err != nil {
		return nil, err
	}
	ev, err := awaitEvent(ctx, id, rdma.EventEstablished)
	if err != nil {
		return nil, err
	}
	peer, err := rsproto.UnmarshalConnData(ev.PrivateData)
	if err != nil {
		return nil, fmt.Errorf("rdma: connect: the peer's reply: %w", err)
	}
	c.run(peer, connOpts{ka: d.KeepAlive, poll: d.PollTime, failure: d.FailureBound})
	return c, nil
}

// awaitEvent reads id's channel until the event that ends the step want
// names: that event, or an error with the failed event's status.
func awaitEvent(ctx context.Context, id *rdma.ID, want rdma.EventType) (*rdma.Event, error) {
	for {
		ev, err := id.Channel().GetEvent(ctx)
		if err != nil {
			return nil, err
		}
		ev.Ack()
		if ev.ID != id {
			continue
		}
		switch {
		case ev.Status != nil:
			return nil, fmt.Errorf("rdma: %v: %w", ev.Type, ev.Status)
		case ev.Type != want:
			return nil, fmt.Errorf("rdma: %v, want %v: %w", ev.Type, want, errInvalid)
		}
		return ev, nil
	}
}
