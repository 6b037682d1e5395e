package rdma

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// EPOptions configure the endpoints DialEP, CreateEP and ListenEP make
// (librdmacm's rdma_addrinfo and ibv_qp_init_attr for rdma_create_ep).
type EPOptions struct {
	// PortSpace is PortSpaceTCP (RC, the default) or PortSpaceUDP (UD).
	PortSpace PortSpace
	// Cap sizes the QP; zero values mean 1 work request and 1 SGE each
	// way. The endpoint's one CQ takes both queues' completions.
	Cap uverbs.QPCap
	// SQSigAll makes every send generate a completion.
	SQSigAll bool
	// NoQP makes the endpoint without a QP (the application brings its
	// own and announces it with ConnParam.QPNum).
	NoQP bool
	// Timeout bounds address and route resolution; 0 means 2s, as
	// librdmacm's rdma_create_ep.
	Timeout time.Duration
	// Param is what DialEP connects with, nil for librdmacm's NULL.
	Param *ConnParam
}

func (o *EPOptions) qpType() (ib.QPType, error) {
	switch o.PortSpace {
	case 0, PortSpaceTCP:
		return ib.QPTypeRC, nil
	case PortSpaceUDP:
		return ib.QPTypeUD, nil
	}
	return 0, fmt.Errorf("port space %v: want TCP or UDP: %w", o.PortSpace, errInvalid)
}

// resolveEP is rdma_getaddrinfo for "host:port": a literal address, or
// a name looked up through ctx.
func resolveEP(ctx context.Context, addr string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %w", err, errInvalid)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port %q: %w", port, errInvalid)
	}
	if host == "" {
		return netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(p)), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(ips[0].Unmap(), uint16(p)), nil
}

// CreateEP makes a synchronous id resolved to addr ("host:port"), with
// a QP unless opts.NoQP (rdma_create_ep on the active side): post its
// receives, then Connect. Close frees everything it made.
func CreateEP(ctx context.Context, addr string, opts *EPOptions) (*ID, error) {
	op := fmt.Sprintf("create endpoint %s", addr)
	if opts == nil {
		opts = &EPOptions{}
	}
	qpType, err := opts.qpType()
	if err != nil {
		return nil, fmt.Errorf("rdma: %s: %w", op, err)
	}
	dst, err := resolveEP(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("rdma: %s: %w", op, err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	id, err := CreateID(orDefault(opts.PortSpace, PortSpaceTCP), qpType)
	if err != nil {
		return nil, err
	}
	err = id.ResolveAddr(ctx, netip.AddrPort{}, dst, timeout)
	if err == nil {
		err = id.ResolveRoute(ctx, timeout)
	}
	if err == nil && !opts.NoQP {
		err = id.createEPQP(opts)
	}
	if err != nil {
		return nil, errors.Join(err, id.Close())
	}
	return id, nil
}

// orDefault is ps, or def when ps is zero (unset).
func orDefault(ps, def PortSpace) PortSpace {
	if ps == 0 {
		return def
	}
	return ps
}

// DialEP is CreateEP and Connect with opts.Param: a connected id (for UD,
// one whose ESTABLISHED gave the peer's address: Peer). Receives posted
// before the peer sends need CreateEP and Connect instead.
func DialEP(ctx context.Context, addr string, opts *EPOptions) (*ID, error) {
	id, err := CreateEP(ctx, addr, opts)
	if err != nil {
		return nil, err
	}
	var param *ConnParam
	if opts != nil {
		param = opts.Param
	}
	if err := id.Connect(ctx, param); err != nil {
		return nil, errors.Join(err, id.Close())
	}
	return id, nil
}

// ListenEP makes a synchronous listener bound to addr ("host:port"; an
// empty host is every address) (rdma_create_ep with RAI_PASSIVE, then
// rdma_listen): GetRequest returns its connection requests, each with a
// QP made with opts unless opts.NoQP.
func ListenEP(addr string, backlog int, opts *EPOptions) (*ID, error) {
	op := fmt.Sprintf("listen endpoint %s", addr)
	if opts == nil {
		opts = &EPOptions{}
	}
	qpType, err := opts.qpType()
	if err != nil {
		return nil, fmt.Errorf("rdma: %s: %w", op, err)
	}
	src, err := resolveEP(context.Background(), addr)
	if err != nil {
		return nil, fmt.Errorf("rdma: %s: %w", op, err)
	}
	id, err := CreateID(orDefault(opts.PortSpace, PortSpaceTCP), qpType)
	if err != nil {
		return nil, err
	}
	o := *opts
	id.mu.Lock()
	id.epOpts = &o
	id.mu.Unlock()
	err = id.Bind(src)
	if err == nil {
		err = id.Listen(backlog)
	}
	if err != nil {
		return nil, errors.Join(err, id.Close())
	}
	return id, nil
}

// GetRequest waits for the next connection request on a synchronous
// listener (rdma_get_request) and returns its new id, moved to a channel
// of its own (synchronous: Accept waits for ESTABLISHED) and, on a
// ListenEP listener, with its QP. Accept, Reject or Close it.
func (id *ID) GetRequest(ctx context.Context) (*ID, error) {
	const op = "get request"
	id.mu.Lock()
	sync, opts := id.sync, id.epOpts
	id.mu.Unlock()
	if !sync {
		return nil, fmt.Errorf("rdma: %s: the listener has a shared channel: read its events with GetEvent: %w", op, errInvalid)
	}
	for {
		ev, err := id.Channel().GetEvent(ctx)
		if err != nil {
			return nil, fmt.Errorf("rdma: %s: %w", op, err)
		}
		ev.Ack()
		if ev.Type != EventConnectRequest || ev.Listen != id {
			// librdmacm reports these as the call's error.
			if ev.Status != nil {
				return nil, fmt.Errorf("rdma: %s: %v: %w", op, ev.Type, ev.Status)
			}
			return nil, fmt.Errorf("rdma: %s: %v, want %v: %w", op, ev.Type, EventConnectRequest, errInvalid)
		}
		child := ev.ID
		err = child.Migrate(nil)
		if err == nil && opts != nil && !opts.NoQP {
			err = child.createEPQP(opts)
		}
		if err != nil {
			return nil, errors.Join(err, child.Close())
		}
		return child, nil
	}
}

// Request is what the peer sent with the connection request that made
// this id (librdmacm's event->param): for the ids of CONNECT_REQUEST
// events and GetRequest.
func (id *ID) Request() (PeerParam, []byte) {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.peer, id.peerData
}

// createEPQP gives the id a PD, one CQ and a QP sized by opts, all freed
// by Close.
func (id *ID) createEPQP(opts *EPOptions) error {
	const op = "create endpoint qp"
	id.mu.Lock()
	dev := id.dev
	err := id.begin(op)
	id.mu.Unlock()
	if err != nil {
		return err
	}
	defer id.end()
	if dev == nil {
		return fmt.Errorf("rdma: %s: no device: %w", op, errInvalid)
	}
	ctx, err := dev.Context()
	if err != nil {
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	c := opts.Cap
	c.MaxSendWR, c.MaxRecvWR = max(c.MaxSendWR, 1), max(c.MaxRecvWR, 1)
	c.MaxSendSGE, c.MaxRecvSGE = max(c.MaxSendSGE, 1), max(c.MaxRecvSGE, 1)
	pd, err := ctx.AllocPD()
	if err != nil {
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	cq, err := ctx.CreateCQ(uverbs.CQAttr{CQE: int(c.MaxSendWR + c.MaxRecvWR)})
	if err != nil {
		pd.Close()
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	_, err = id.CreateQP(pd, uverbs.QPInit{SendCQ: cq, RecvCQ: cq, Cap: c, SQSigAll: opts.SQSigAll})
	// With id.cmd held, a Close is wholly before (it has destroyed the
	// QP, and the CQ is free to go) or wholly after (it frees all three).
	id.cmd.RLock()
	id.mu.Lock()
	if err == nil && id.dead {
		err = fmt.Errorf("rdma: %s: %w", op, errClosed)
	}
	if err == nil {
		id.epPD, id.epCQ = pd, cq
	}
	id.mu.Unlock()
	id.cmd.RUnlock()
	if err != nil {
		return errors.Join(err, cq.Close(), pd.Close())
	}
	return nil
}

// PD is the protection domain CreateEP, DialEP or GetRequest made for
// the id's QP (register memory in it), nil for other ids.
func (id *ID) PD() *uverbs.PD {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.epPD
}

// CQ is the completion queue of both of the QP's queues on an endpoint
// (CreateEP, DialEP, GetRequest), nil for other ids.
func (id *ID) CQ() *uverbs.CQ {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.epCQ
}
