package rdma

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// PortSpace is an id's port space (enum rdma_ucm_port_space, a __u16 in
// struct rdma_ucm_create_id): which transport its ports belong to.
type PortSpace uint16

// Port spaces.
const (
	PortSpaceTCP   PortSpace = ucma.RDMA_PS_TCP   // RC connections
	PortSpaceUDP   PortSpace = ucma.RDMA_PS_UDP   // UD, SIDR and multicast
	PortSpaceIB    PortSpace = ucma.RDMA_PS_IB    // RC or UD, AF_IB addressing
	PortSpaceIPoIB PortSpace = ucma.RDMA_PS_IPOIB // UD, IPoIB's qkey
)

// String returns "TCP", "UDP", "IB" or "IPoIB", the names `rdma
// resource` prints (but for RDMA_PS_IB, which iproute2 also calls
// "IPoIB"), and PortSpace(0x...) for other values.
func (ps PortSpace) String() string {
	switch ps {
	case PortSpaceTCP:
		return "TCP"
	case PortSpaceUDP:
		return "UDP"
	case PortSpaceIB:
		return "IB"
	case PortSpaceIPoIB:
		return "IPoIB"
	}
	return fmt.Sprintf("PortSpace(%#x)", uint16(ps))
}

// MaxResources, as ConnParam's ResponderResources or InitiatorDepth, asks
// for the most the device (and, on Accept, the peer's request) allows
// (RDMA_MAX_RESP_RES, RDMA_MAX_INIT_DEPTH).
const MaxResources = 0xFF

// ID is a connection manager id (struct rdma_cm_id): one endpoint that
// binds to an address, resolves a route to a peer and connects, or
// listens for connections. Close destroys it (and its QP).
type ID struct {
	ch     *EventChannel
	uid    uint64
	handle uint32 // the kernel's id
	ps     PortSpace
	qpType ib.QPType

	// cmd is held (read) by every command on handle, and (write) by
	// Close, which sets dead (holding mu too, so that either lock reads
	// it): no command can reach a kernel id number that was destroyed
	// and given to another id. gone is closed once Close is done.
	cmd  sync.RWMutex
	dead bool
	gone chan struct{}

	// creating counts the calls that are making objects for the id
	// (CreateQP, an endpoint's PD and CQ), enrolled while it is not dead
	// (begin): Close waits for them, and each destroys what it made if
	// it finds the id closed when it would hand it over.
	creating sync.WaitGroup

	mu    sync.Mutex // guards what follows
	sync  bool       // librdmacm's synchronous id: its calls wait for their events
	ownCh bool       // the channel is the id's own: Close closes it
	list  []*Device  // the GetDevices list that holds dev, freed on Close
	dev   *Device
	port  uint8
	qp    *uverbs.QP
	srq   bool
	busy  bool         // a CreateQP is making the id's QP
	mcs   []*Multicast // joined, not left

	// Endpoints (cm_ep.go): what the id made for its QP and frees after
	// it, and a listener's options for its requests' QPs.
	epPD   *uverbs.PD
	epCQ   *uverbs.CQ
	epOpts *EPOptions

	// A request's parameters and private data, on the id it made.
	peer     PeerParam
	peerData []byte

	// peerMTU reads the peer's path MTU from its reply (Connect's
	// ConnParam.PeerPathMTU), for CONNECT_RESPONSE.
	peerMTU func([]byte) ib.MTU

	// The request's values on a passive id, capped on Accept.
	initiatorDepth, responderResources uint8

	delivered, acked atomic.Uint64
}

// CreateID creates an id on the channel (rdma_create_id2): PortSpaceTCP
// with ib.QPTypeRC, PortSpaceUDP or PortSpaceIPoIB with ib.QPTypeUD,
// PortSpaceIB with either.
func (ch *EventChannel) CreateID(ps PortSpace, qpType ib.QPType) (*ID, error) {
	op := fmt.Sprintf("create %v id", ps)
	switch {
	case ps == PortSpaceTCP && qpType == ib.QPTypeRC, ps == PortSpaceUDP && qpType == ib.QPTypeUD,
		ps == PortSpaceIPoIB && qpType == ib.QPTypeUD, ps == PortSpaceIB && (qpType == ib.QPTypeRC || qpType == ib.QPTypeUD):
	default:
		return nil, fmt.Errorf("rdma: %s: port space %#x does not carry %v QPs: %w", op, uint16(ps), qpType, errInvalid)
	}
	// The kernel id is made first and enrolled with its handle: an id in
	// the channel's table always has one for Close to destroy. It has
	// no events before a command on it, so none is missed meanwhile.
	id := &ID{ch: ch, uid: nextUID.Add(1), ps: ps, qpType: qpType}
	req := ucma.CreateID{UID: id.uid, PS: uint16(ps), QPType: uint8(qpType)}
	var resp ucma.CreateIDResp
	if err := ch.write(op, ucma.RDMA_USER_CM_CMD_CREATE_ID, kabi.Bytes(&req), 8, kabi.Bytes(&resp)); err != nil {
		return nil, err
	}
	id.handle = resp.ID
	if err := ch.register(id); err != nil {
		// Closed meanwhile: this id escaped its Close.
		ch.destroyHandle(id.handle)
		return nil, fmt.Errorf("rdma: %s: %w", op, err)
	}
	return id, nil
}

// PortSpace is the id's port space.
func (id *ID) PortSpace() PortSpace { return id.ps }

// QPType is the type of QP the id drives.
func (id *ID) QPType() ib.QPType { return id.qpType }

// Channel is the channel the id's events come on.
func (id *ID) Channel() *EventChannel {
	id.cmd.RLock()
	defer id.cmd.RUnlock()
	return id.ch
}

// Handle is the rdma_ucm handle of the id: the number the kernel gave it
// when it was created, with which every command names it (what librdmacm
// keeps in cma_id_private.handle). It is stable while the id lives and
// unique among the live ids of the kernel's rdma_ucm. It is not the
// cm-idn `rdma resource show cm_id` prints (the kernel's restrack id),
// and the C tools do not print it.
func (id *ID) Handle() uint32 { return id.handle }

// Device is the device the id is bound to, nil before it is (after Bind
// to a specific address, ADDR_RESOLVED, or on an incoming connection).
func (id *ID) Device() *Device {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.dev
}

// Port is the device port the id is bound to (from 1), 0 before.
func (id *ID) Port() int {
	id.mu.Lock()
	defer id.mu.Unlock()
	return int(id.port)
}

// QP is the id's queue pair (CreateQP), nil before.
func (id *ID) QP() *uverbs.QP {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.qp
}

// UnackedEvents is the number of the id's events GetEvent returned and
// nobody acknowledged.
func (id *ID) UnackedEvents() int { return int(id.delivered.Load() - id.acked.Load()) }

// live fails when the id is closed.
func (id *ID) live(op string) error {
	id.cmd.RLock()
	defer id.cmd.RUnlock()
	if id.dead {
		return fmt.Errorf("rdma: %s: %w", op, errClosed)
	}
	return nil
}

// write sends a command on the id, unless it is closed.
func (id *ID) write(op string, cmd uint32, req []byte, respOff int, resp []byte) error {
	id.cmd.RLock()
	defer id.cmd.RUnlock()
	if id.dead {
		return fmt.Errorf("rdma: %s: %w", op, errClosed)
	}
	return id.ch.write(op, cmd, req, respOff, resp)
}

// Bind binds the id to a local address (rdma_bind_addr); a specific
// address binds it to that address's device, port 0 picks a free port.
// IPv4-mapped IPv6 addresses bind as IPv4. An IPv6 zone is an interface's
// name or index; one that names none is an error (a *net.AddrError).
func (id *ID) Bind(addr netip.AddrPort) error {
	op := fmt.Sprintf("bind %v", addr)
	req := ucma.Bind{ID: id.handle}
	var err error
	if req.AddrSize, err = putSockaddr(&req.Addr, addr); err != nil {
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_BIND, kabi.Bytes(&req), 0, nil); err != nil {
		return err
	}
	_, err = id.queryAddr()
	return err
}

// ResolveAddr resolves dst, and src when valid (else the route's source
// is used), to a device and port (rdma_resolve_addr); an unbound id gets
// a free port; zones are as Bind takes them. The result is an
// ADDR_RESOLVED or ADDR_ERROR event within timeout. On a synchronous id
// ResolveAddr waits for it (until ctx ends); otherwise it returns once
// the kernel took the request and ctx is unused.
func (id *ID) ResolveAddr(ctx context.Context, src, dst netip.AddrPort, timeout time.Duration) error {
	op := fmt.Sprintf("resolve addr %v", dst)
	ms, err := millis(op, timeout)
	if err != nil {
		return err
	}
	req := ucma.ResolveAddr{ID: id.handle, TimeoutMs: ms}
	if req.DstSize, err = putSockaddr(&req.DstAddr, dst); err != nil {
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	if src.IsValid() {
		if req.SrcSize, err = putSockaddr(&req.SrcAddr, src); err != nil {
			return fmt.Errorf("rdma: %s: source: %w", op, err)
		}
	}
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_RESOLVE_ADDR, kabi.Bytes(&req), 0, nil); err != nil {
		return err
	}
	return id.await(ctx, op, EventAddrResolved)
}

// ResolveRoute resolves the route to the resolved destination
// (rdma_resolve_route): a ROUTE_RESOLVED or ROUTE_ERROR event within
// timeout. Synchronous ids wait for it, as ResolveAddr.
func (id *ID) ResolveRoute(ctx context.Context, timeout time.Duration) error {
	const op = "resolve route"
	ms, err := millis(op, timeout)
	if err != nil {
		return err
	}
	req := ucma.ResolveRoute{ID: id.handle, TimeoutMs: ms}
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_RESOLVE_ROUTE, kabi.Bytes(&req), 0, nil); err != nil {
		return err
	}
	return id.await(ctx, op, EventRouteResolved)
}

func millis(op string, d time.Duration) (uint32, error) {
	if d <= 0 || d.Milliseconds() > 1<<31 {
		return 0, fmt.Errorf("rdma: %s: timeout %v: want 1ms to 24 days: %w", op, d, errInvalid)
	}
	return uint32(max(d.Milliseconds(), 1)), nil
}

// Listen makes a bound id listen for connections (rdma_listen); each one
// comes as a CONNECT_REQUEST event with its own new id. A backlog of 0
// or less means the kernel's maximum (net.rdma_ucm.max_backlog).
func (id *ID) Listen(backlog int) error {
	req := ucma.Listen{ID: id.handle, Backlog: uint32(max(backlog, 0))}
	return id.write("listen", ucma.RDMA_USER_CM_CMD_LISTEN, kabi.Bytes(&req), 0, nil)
}

// ConnParam is what Connect and Accept send (struct rdma_conn_param).
type ConnParam struct {
	PrivateData []byte

	// RDMA reads and atomics in flight this side accepts as a target
	// (ResponderResources) and issues (InitiatorDepth); MaxResources for
	// the most allowed.
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8 // 0..7: transport retries (Connect only)
	RNRRetryCount      uint8 // 0..7, 7 = forever: the peer's retries when this side has no receive posted

	// QPNum is the QP to announce when the id has no QP of its own
	// (CreateQP); ignored otherwise.
	QPNum uint32
	SRQ   bool

	// PeerPathMTU, when set, reads the largest path MTU the peer's port
	// carries from the private data it sent: its request, on Accept; its
	// reply, on Connect. The id's RC QP then goes to RTR with the smallest
	// of the CM's path MTU, this port's active MTU and the peer's, so
	// that both sides agree on what both wires carry. RoCE's CM does not
	// negotiate this: it gives both QPs the dialer's route MTU, which a
	// listener with a smaller MTU cannot send or take. Zero means the
	// peer did not say (the CM's MTU stands). It must be the same
	// function on both sides, and both must announce their port's active
	// MTU in their private data; rsockets do (rsocket's connection data).
	// Only for ids with a QP (CreateQP).
	PeerPathMTU func(privateData []byte) ib.MTU
}

// defaultConnParam is librdmacm's for a NULL conn_param.
var defaultConnParam = ConnParam{ResponderResources: MaxResources, InitiatorDepth: MaxResources, RetryCount: 7, RNRRetryCount: 7}

// connParam is p as the kernel takes it; the private data may be maxRC
// bytes long on an RC id, maxUD on a UD one, and MPA's limit on iWARP.
func (id *ID) connParam(op string, p *ConnParam, maxRC, maxUD int) (ucma.ConnParam, error) {
	maxData := maxRC
	switch {
	case id.qpType == ib.QPTypeUD:
		maxData = maxUD
	case id.iWARP():
		maxData = iwarpPrivateData
	}
	if p == nil {
		p = &defaultConnParam
	}
	if len(p.PrivateData) > maxData {
		return ucma.ConnParam{}, fmt.Errorf("rdma: %s: %d bytes of private data: at most %d: %w", op, len(p.PrivateData), maxData, errInvalid)
	}
	c := ucma.ConnParam{QPNum: p.QPNum, PrivateDataLen: uint8(len(p.PrivateData)), SRQ: b2u(p.SRQ),
		ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth, FlowControl: p.FlowControl,
		RetryCount: min(p.RetryCount, 7), RNRRetryCount: min(p.RNRRetryCount, 7), Valid: 1}
	copy(c.PrivateData[:], p.PrivateData)
	id.mu.Lock()
	if id.qp != nil {
		c.QPNum, c.SRQ = id.qp.Num(), b2u(id.srq)
	}
	id.mu.Unlock()
	return c, nil
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// deviceMax is the device's limits for responder resources and
// initiator depth (librdmacm's max_responder_resources and
// max_initiator_depth).
func (id *ID) deviceMax() (resp, init uint8) {
	id.mu.Lock()
	d := id.dev
	id.mu.Unlock()
	if d == nil {
		return 0, 0
	}
	return uint8(min(d.attr.MaxQPRdAtom, 0xFE)), uint8(min(d.attr.MaxQPInitRdAtom, 0xFE))
}

// Connect sends a connection request to the resolved destination
// (rdma_connect): for RC the peer's CONNECT_REQUEST; this side then gets
// ESTABLISHED (GetEvent completes the connection of an id with a QP),
// REJECTED or UNREACHABLE. For UD it is a SIDR request, answered by
// ESTABLISHED with the peer's QP number, qkey and address. A nil param
// is librdmacm's NULL: the device's maximum resources, 7 retries each.
// Synchronous ids wait for ESTABLISHED. iWARP has no SIDR: a UD id's
// Connect there fails with an error matching ErrNotSupported. Private
// data is at most 56 bytes (RC), 180 (UD), or 251 on iWARP.
func (id *ID) Connect(ctx context.Context, param *ConnParam) error {
	const op = "connect"
	if err := id.iwarpForbidsUD(op, "SIDR", unix.EOPNOTSUPP); err != nil {
		return err
	}
	c, err := id.connParam(op, param, ucma.ConnectPrivateDataTCP, ucma.ConnectPrivateDataUDP)
	if err != nil {
		return err
	}
	if id.qpType == ib.QPTypeRC {
		resp, init := id.deviceMax()
		if c.ResponderResources == MaxResources {
			c.ResponderResources = resp
		} else if c.ResponderResources > resp {
			return fmt.Errorf("rdma: %s: %d responder resources: the device has %d: %w", op, c.ResponderResources, resp, errInvalid)
		}
		if c.InitiatorDepth == MaxResources {
			c.InitiatorDepth = init
		} else if c.InitiatorDepth > init {
			return fmt.Errorf("rdma: %s: initiator depth %d: the device has %d: %w", op, c.InitiatorDepth, init, errInvalid)
		}
	}
	if param != nil {
		id.mu.Lock()
		id.peerMTU = param.PeerPathMTU
		id.mu.Unlock()
	}
	req := ucma.Connect{ConnParam: c, ID: id.handle}
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_CONNECT, kabi.Bytes(&req), 0, nil); err != nil {
		return err
	}
	return id.await(ctx, op, EventEstablished)
}

// Accept accepts the connection request that made this id (rdma_accept).
// With a QP, the QP is moved to RTR and RTS first (RC). A nil param, or
// MaxResources, takes the request's resources capped at the device's.
// The passive side's ESTABLISHED follows for RC (synchronous ids wait
// for it); UD has none. Private data is at most 196 bytes (RC), 136
// (UD), or 251 on iWARP, where a UD id's Accept (SIDR) fails with an
// error matching ErrNotSupported.
func (id *ID) Accept(ctx context.Context, param *ConnParam) error {
	const op = "accept"
	if err := id.iwarpForbidsUD(op, "SIDR", unix.EOPNOTSUPP); err != nil {
		return err
	}
	c, err := id.connParam(op, param, ucma.AcceptPrivateDataTCP, ucma.AcceptPrivateDataUDP)
	if err != nil {
		return err
	}
	resp, init := id.deviceMax()
	if c.InitiatorDepth == MaxResources {
		c.InitiatorDepth = min(id.initiatorDepth, init)
	}
	if c.ResponderResources == MaxResources {
		c.ResponderResources = min(id.responderResources, resp)
	}
	if qp := id.QP(); qp != nil && id.qpType == ib.QPTypeRC {
		var peerMTU ib.MTU
		if param != nil && param.PeerPathMTU != nil {
			_, data := id.Request()
			peerMTU = param.PeerPathMTU(data)
		}
		if err := id.modifyRTR(qp, c.ResponderResources, peerMTU); err != nil {
			return id.failQP(op, qp, err)
		}
		if err := id.modifyRTS(qp, c.InitiatorDepth); err != nil {
			return id.failQP(op, qp, err)
		}
	}
	req := ucma.Accept{UID: id.uid, ConnParam: c, ID: id.handle}
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_ACCEPT, kabi.Bytes(&req), 0, nil); err != nil {
		if qp := id.QP(); qp != nil {
			qp.Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState)
		}
		return err
	}
	if id.qpType == ib.QPTypeUD {
		return nil
	}
	return id.await(ctx, op, EventEstablished)
}

// Reject refuses the connection request that made this id (rdma_reject):
// the peer gets REJECTED with RejectConsumerDefined (a UD peer an
// UNREACHABLE with SIDR status 2) and the private data (at most 148
// bytes; 251 on iWARP, whose peer gets REJECTED with ECONNRESET).
// Close the id afterwards.
func (id *ID) Reject(privateData []byte) error {
	const op = "reject"
	maxData := ucma.RejectPrivateData
	if id.iWARP() {
		maxData = iwarpPrivateData
	}
	if len(privateData) > maxData {
		return fmt.Errorf("rdma: %s: %d bytes of private data: at most %d: %w", op, len(privateData), maxData, errInvalid)
	}
	req := ucma.Reject{ID: id.handle, PrivateDataLen: uint8(len(privateData))}
	copy(req.PrivateData[:], privateData)
	return id.write(op, ucma.RDMA_USER_CM_CMD_REJECT, kabi.Bytes(&req), 0, nil)
}

// Disconnect moves the QP to the error state (flushing its work
// requests) and disconnects (rdma_disconnect): the peer gets DISCONNECTED,
// and this side too once the peer answers. On iWARP the QP goes to SQD
// instead, as librdmacm's does: the driver then closes the connection
// (TCP's orderly close) rather than abort it.
func (id *ID) Disconnect() error {
	const op = "disconnect"
	if err := id.live(op); err != nil {
		return err
	}
	if qp := id.QP(); qp != nil && id.qpType == ib.QPTypeRC {
		state := ib.QPStateErr
		if id.iWARP() {
			state = ib.QPStateSQD
		}
		if err := qp.Modify(&uverbs.QPAttr{State: state}, uverbs.QPAttrState); err != nil {
			return fmt.Errorf("rdma: %s: %w", op, err)
		}
	}
	req := ucma.Disconnect{ID: id.handle}
	return id.write(op, ucma.RDMA_USER_CM_CMD_DISCONNECT, kabi.Bytes(&req), 0, nil)
}

// Close destroys the id's QP and the id (rdma_destroy_qp, rdma_destroy_id).
// A connected id's peer gets DISCONNECTED; a request not yet accepted is
// rejected. Events the kernel had queued for it are dropped, and Close
// never waits for its delivered events to be acknowledged (they hold
// nothing of it). A CreateQP or JoinMulticast running meanwhile fails
// with an error matching os.ErrClosed and leaves nothing behind; Close
// waits for a CreateQP to have destroyed its QP. Safe to call more than
// once and from several goroutines at once: a second call returns nil
// once the first is done.
func (id *ID) Close() error {
	err := id.destroy(nil)
	id.mu.Lock()
	own := id.ownCh
	id.mu.Unlock()
	if own {
		err = errors.Join(err, id.Channel().Close())
	}
	return err
}

// begin enrolls a call that makes objects for the id, unless the id is
// closed; end, deferred, ends it. Call it with id.mu held.
func (id *ID) begin(op string) error {
	if id.dead {
		return fmt.Errorf("rdma: %s: %w", op, errClosed)
	}
	id.creating.Add(1)
	return nil
}

func (id *ID) end() { id.creating.Done() }

// destroy destroys the id, unless on is not nil and the id has moved
// from that channel to another (Migrate): the Close of a channel leaves
// an id that left it alone.
func (id *ID) destroy(on *EventChannel) error {
	id.cmd.Lock()
	if on != nil && id.ch != on {
		id.cmd.Unlock()
		return nil
	}
	if id.dead {
		gone := id.gone
		id.cmd.Unlock()
		<-gone
		return nil
	}
	id.mu.Lock()
	id.dead, id.gone = true, make(chan struct{})
	qp, list, mcs, pd, cq := id.qp, id.list, id.mcs, id.epPD, id.epCQ
	id.qp, id.list, id.dev, id.mcs, id.epPD, id.epCQ = nil, nil, nil, nil, nil, nil
	id.mu.Unlock()
	err := id.destroyLocked(qp, list, mcs, pd, cq)
	id.cmd.Unlock()
	// Calls making objects for the id find it dead at their next
	// command, or when they would hand their objects over, and destroy
	// them: wait for that.
	id.creating.Wait()
	close(id.gone)
	return err
}

// destroyLocked frees what destroy took from the id, id.cmd held.
func (id *ID) destroyLocked(qp *uverbs.QP, list []*Device, mcs []*Multicast, pd *uverbs.PD, cq *uverbs.CQ) error {
	// DESTROY_ID leaves the id's groups; the QP's attachments go with it.
	for _, m := range mcs {
		id.ch.unregisterMC(m)
	}
	var errs []error
	if qp != nil {
		errs = append(errs, qp.Close())
	}
	if cq != nil {
		errs = append(errs, cq.Close(), pd.Close())
	}
	req := ucma.DestroyID{ID: id.handle}
	var resp ucma.DestroyIDResp
	err := id.ch.write("destroy id", ucma.RDMA_USER_CM_CMD_DESTROY_ID, kabi.Bytes(&req), 0, kabi.Bytes(&resp))
	if err != nil && !errors.Is(err, errClosed) {
		errs = append(errs, err)
	}
	// Events the kernel reported beyond those GetEvent delivered are in
	// a GetEvent of another goroutine: without the id in the table it
	// drops them.
	id.ch.unregister(id)
	FreeDevices(list)
	return errors.Join(errs...)
}
