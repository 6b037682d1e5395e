package perftest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// With -R perftest replaces its TCP socket by an RC connection over
// rdma_cm (PS_TCP, the same port): each message is one SEND of its size,
// received into a 56-byte buffer (struct pingpong_dest) that is reposted
// after each, both sides busy-polling their CQs. The test QPs are then
// connected by rdma_cm too.

const (
	syncWRID   = 5  // SYNC_SPEC_ID
	cmKeySize  = 56 // sizeof(struct pingpong_dest)
	cmRetries  = 10 // NUM_OF_RETRIES
	cmResolveT = 2000 * time.Millisecond
)

// encodeKeyCM is struct pingpong_dest as rdma_write_keys sends it: the
// numbers big-endian (lid, out_reads, qpn, psn, rkey at 0..16, vaddr at
// 24, the GID at 32, srqn at 48, gid_index at 52).
func encodeKeyCM(d *Dest, gidIndex int) []byte {
	b := make([]byte, cmKeySize)
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(d.LID))
	be.PutUint32(b[4:], uint32(d.OutReads))
	be.PutUint32(b[8:], d.QPN)
	be.PutUint32(b[12:], d.PSN)
	be.PutUint32(b[16:], d.RKey)
	be.PutUint64(b[24:], d.VAddr)
	copy(b[32:48], d.GID[:])
	be.PutUint32(b[48:], d.SRQN)
	be.PutUint32(b[52:], uint32(int32(gidIndex)))
	return b
}

// decodeKeyCM is rdma_read_keys (which does not read srqn).
func decodeKeyCM(b []byte) (Dest, error) {
	if len(b) < cmKeySize {
		return Dest{}, fmt.Errorf("%w: %d bytes, want %d", ErrKeyMessage, len(b), cmKeySize)
	}
	be := binary.BigEndian
	d := Dest{LID: uint16(be.Uint32(b[0:])), OutReads: uint16(be.Uint32(b[4:])), QPN: be.Uint32(b[8:]),
		PSN: be.Uint32(b[12:]), RKey: be.Uint32(b[16:]), VAddr: be.Uint64(b[24:])}
	copy(d.GID[:], b[32:48])
	return d, nil
}

// cmChannel is the control connection: its id, and the verbs objects
// on the id's device context.
//
// perftest busy-polls the control QP for each message for as long as it
// takes (rdma_read_keys has no timeout): a -R write or read run, whose
// server hears nothing until the client's closing exchange, may last as
// long as the user asks. So does ours, but a dead peer must not hold it
// for ever: once connected, a watcher takes the control id's next CM
// event, which can only end the connection (DISCONNECTED when the peer
// disconnects or its process dies and its kernel closes the connection,
// iWARP's TCP connection failing, DEVICE_REMOVAL, ...), and a wait for a
// completion then ends with errPeerGone instead. On iWARP the kernel
// also flushes the QP then, so the completion that comes is an error.
type cmChannel struct {
	id      *rdma.ID
	gone    atomic.Pointer[string] // what ended the connection, once something did
	stop    context.CancelFunc     // ends the watcher
	ended   chan struct{}          // closed when the watcher has returned
	closing atomic.Bool            // close is stopping the watcher
	pd      *uverbs.PD
	buf     *membuf.Buffer // sends from [0, 64), receives into [64, 120)
	mr      *membuf.MR
	scq     *uverbs.CQ
	rcq     *uverbs.CQ
	qp      *uverbs.QP
	rwr     uverbs.RecvWR
	rsge    [1]uverbs.SGE
}

// PeerGoneBound is how soon a -R run fails once its peer's process has
// died (its kernel closes the connection): the CM event's way across the
// wire and the poll that notices it, with room for a slow guest.
const PeerGoneBound = 5 * time.Second

// errPeerGone is a wait for the control QP ended by the connection's end.
var errPeerGone = errors.New("the control connection ended")

// watch starts the watcher of the connected control id (see cmChannel);
// ctx ending (the run interrupted) ends the connection's waits too.
func (m *cmChannel) watch(ctx context.Context) {
	ctx, m.stop = context.WithCancel(ctx)
	m.ended = make(chan struct{})
	go func() {
		defer close(m.ended)
		ev, err := m.id.Channel().GetEvent(ctx)
		why := ""
		switch {
		case err == nil:
			why = ev.Type.String()
			if ev.Status != nil {
				why += ": " + ev.Status.Error()
			}
			ev.Ack()
		case m.closing.Load():
			return // close stopped it
		default:
			why = err.Error()
		}
		m.gone.Store(&why)
	}()
}

// goneErr is errPeerGone with what ended the connection, or nil while it
// lasts.
func (m *cmChannel) goneErr() error {
	if why := m.gone.Load(); why != nil {
		return fmt.Errorf("%w: %s", errPeerGone, *why)
	}
	return nil
}

func (m *cmChannel) close() error {
	if m.stop != nil {
		m.closing.Store(true)
		m.stop()
		<-m.ended
	}
	if m.id != nil {
		m.id.Disconnect()
		m.id.Close()
	}
	if m.scq != nil {
		m.scq.Close()
	}
	if m.rcq != nil {
		m.rcq.Close()
	}
	if m.mr != nil {
		m.mr.Close()
	}
	if m.pd != nil {
		m.pd.Close()
	}
	if m.buf != nil {
		m.buf.Close()
	}
	return nil
}

// setUp creates the control QP on id's device (one send, one receive)
// and posts the first receive.
func (m *cmChannel) setUp(id *rdma.ID) error {
	m.id = id
	dev := id.Device()
	if dev == nil {
		return fmt.Errorf("no device")
	}
	vctx, err := dev.Context()
	if err != nil {
		return err
	}
	if m.pd, err = vctx.AllocPD(); err != nil {
		return err
	}
	if m.buf, err = membuf.New(128); err != nil {
		return err
	}
	if m.mr, err = m.buf.Register(m.pd, uverbs.AccessLocalWrite); err != nil {
		return err
	}
	if m.scq, err = vctx.CreateCQ(uverbs.CQAttr{CQE: 1}); err != nil {
		return err
	}
	if m.rcq, err = vctx.CreateCQ(uverbs.CQAttr{CQE: 1}); err != nil {
		return err
	}
	if m.qp, err = id.CreateQP(m.pd, uverbs.QPInit{SendCQ: m.scq, RecvCQ: m.rcq,
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		return err
	}
	m.rsge[0] = uverbs.SGE{Addr: m.buf.Addr(64), Length: cmKeySize, LKey: m.mr.LKey()}
	m.rwr = uverbs.RecvWR{ID: syncWRID, SGE: m.rsge[:]}
	return m.qp.PostRecv(&m.rwr)
}

// poll busy-polls cq for one completion, without a time limit (as
// perftest does), until the connection ends (see cmChannel): then a
// completion already there is still taken, and otherwise the wait ends
// with errPeerGone.
func (m *cmChannel) poll(cq *uverbs.CQ) (uverbs.WC, error) {
	var wc [1]uverbs.WC
	for n := 0; ; n++ {
		gone := n&0xfff == 0xfff && m.goneErr() != nil
		ne, err := cq.Poll(wc[:])
		if err != nil {
			return wc[0], err
		}
		if ne > 0 {
			return wc[0], nil
		}
		if gone {
			return wc[0], m.goneErr()
		}
		if n&0xfff == 0xfff {
			runtime.Gosched() // the watcher's turn, on a busy machine
		}
	}
}

func (m *cmChannel) write(b []byte) error {
	copy(m.buf.Bytes()[:64], b)
	sge := [1]uverbs.SGE{{Addr: m.buf.Addr(0), Length: uint32(len(b)), LKey: m.mr.LKey()}}
	wr := uverbs.SendWR{ID: syncWRID, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: sge[:]}
	if err := m.qp.PostSend(&wr); err != nil {
		return fmt.Errorf("Function ibv_post_send failed")
	}
	wc, err := m.poll(m.scq)
	if errors.Is(err, errPeerGone) {
		return fmt.Errorf(" Failed to send to the peer: %v", err)
	}
	if err != nil || wc.Status != uverbs.WCSuccess || wc.Opcode != uverbs.WCSend || wc.ID != syncWRID {
		return fmt.Errorf(" Bad wc status %d", int(wc.Status))
	}
	return nil
}

func (m *cmChannel) read(n int) ([]byte, error) {
	wc, err := m.poll(m.rcq)
	if errors.Is(err, errPeerGone) {
		return nil, fmt.Errorf(" Failed to receive from the peer: %v", err)
	}
	if err != nil || wc.Status != uverbs.WCSuccess || wc.ID != syncWRID {
		return nil, fmt.Errorf("Bad wc status -- %d -- %d ", int(wc.Status), int(wc.ID))
	}
	b := make([]byte, n)
	copy(b, m.buf.Bytes()[64:64+min(n, cmKeySize)])
	if err := m.qp.PostRecv(&m.rwr); err != nil {
		return nil, fmt.Errorf("Couldn't post send ")
	}
	return b, nil
}

const cmClientFailed = " Unable to perform rdma_client function\n Unable to init the socket connection\n"

// serverAddr resolves the client's server name to its IPv4 address.
func serverAddr(name string, port int) (netip.AddrPort, error) {
	if a, err := netip.ParseAddr(name); err == nil && a.Is4() {
		return netip.AddrPortFrom(a, uint16(port)), nil
	}
	ips, err := net.LookupIP(name)
	if err != nil {
		return netip.AddrPort{}, err
	}
	for _, ip := range ips {
		if v4 := ip.To4(); v4 != nil {
			a, _ := netip.AddrFromSlice(v4)
			return netip.AddrPortFrom(a, uint16(port)), nil
		}
	}
	return netip.AddrPort{}, fmt.Errorf("%s has no IPv4 address", name)
}

// resolve is rdma_client_connect's address and route resolution: each
// retried on error, cmRetries times in all.
func resolve(ctx context.Context, id *rdma.ID, dst netip.AddrPort, tos int) error {
	left := cmRetries
	for {
		if left == 0 {
			return fail(fmt.Sprintf("Received %d times ADDR_ERROR\n", cmRetries))
		}
		if err := id.ResolveAddr(ctx, netip.AddrPort{}, dst, cmResolveT); err != nil {
			left--
			continue
		}
		break
	}
	if tos != -1 {
		if err := id.SetOption(rdma.OptionTOS, tos); err != nil {
			return fail(" Set TOS option failed: " + err.Error() + "\n")
		}
	}
	for {
		if left <= 0 {
			return fail(fmt.Sprintf("Received %d times ADDR_ERROR - aborting\n", cmRetries))
		}
		if err := id.ResolveRoute(ctx, cmResolveT); err != nil {
			left--
			continue
		}
		return nil
	}
}

// dialCM is rdma_client_connect for the control connection.
func dialCM(ctx context.Context, c *Config) (channel, error) {
	dst, err := serverAddr(c.Server, c.Port)
	if err != nil {
		return nil, fail("Problem in resolving basic address and port\n" + cmClientFailed)
	}
	id, err := rdma.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		return nil, fail(" Couldn't create rdma_cm id: " + err.Error() + "\n Unable to create RDMA_CM resources\n")
	}
	m := &cmChannel{id: id}
	if err := resolve(ctx, id, dst, -1); err != nil {
		m.close()
		return nil, withLine(err, cmClientFailed)
	}
	if err := m.setUp(id); err != nil {
		m.close()
		return nil, fail("Couldn't create IB resources: " + err.Error() + "\n" + cmClientFailed)
	}
	p := &rdma.ConnParam{RetryCount: uint8(min(c.Retry, 7)), RNRRetryCount: 7}
	cctx, cancel := context.WithTimeout(ctx, aliveTimeout)
	defer cancel()
	if err := id.Connect(cctx, p); err != nil {
		m.close()
		ev := 7 // RDMA_CM_EVENT_UNREACHABLE
		var rr rdma.RejectReason
		var re rdma.RejectErrno // iWARP's
		if errors.As(err, &rr) || errors.As(err, &re) {
			ev = 8 // RDMA_CM_EVENT_REJECTED
		}
		return nil, fail(fmt.Sprintf("Unexpected CM event bl blka %d\n", ev) + cmClientFailed)
	}
	m.watch(ctx)
	return m, nil
}

// listenCM is rdma_server_connect: listen on the port, take one
// request, accept it with a QP of its own, stop listening.
func listenCM(ctx context.Context, c *Config) (channel, error) {
	const failed = " Unable to perform rdma_server function\n Unable to init the socket connection\n"
	l, err := rdma.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		return nil, fail(" Couldn't create rdma_cm id: " + err.Error() + "\n Unable to create RDMA_CM resources\n")
	}
	defer l.Close()
	if err := l.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(c.Port))); err != nil {
		return nil, fail("rdma_bind_addr failed\n" + failed)
	}
	if err := l.Listen(c.NumQPs); err != nil {
		return nil, fail("rdma_listen failed\n" + failed)
	}
	id, err := l.GetRequest(ctx)
	if err != nil {
		return nil, fail("rdma_get_cm_event failed: " + err.Error() + "\n" + failed)
	}
	m := &cmChannel{id: id}
	if err := m.setUp(id); err != nil {
		m.close()
		return nil, fail("Couldn't create IB resources: " + err.Error() + "\n" + failed)
	}
	actx, cancel := context.WithTimeout(ctx, aliveTimeout)
	defer cancel()
	if err := id.Accept(actx, &rdma.ConnParam{RetryCount: uint8(min(c.Retry, 7)), RNRRetryCount: 7}); err != nil {
		m.close()
		return nil, fail("rdma_accept failed: " + err.Error() + "\n" + failed)
	}
	m.watch(ctx)
	return m, nil
}

// cmConnect is create_rdma_cm_connection: after a sync, the client
// connects one id per test QP to the server's port (the whole attempt
// retried up to ten times), the server accepts them on a listener of
// its own; the test resources are created on the first id's device;
// another sync ends it.
func (s *session) cmConnect(ctx context.Context, size uint64) error {
	c, r := s.c, s.r
	// The peer is known by now: a step that does not come within the
	// alive timeout fails instead of waiting for ever.
	ctx, cancel := context.WithTimeout(ctx, aliveTimeout)
	defer cancel()
	// perftest's server listens after the sync below, and its client
	// connects right after it, once: a server slower to listen than the
	// client to resolve gets REJECTED (no listener) and perftest's retry
	// does not recover. Ours listens before the sync.
	var l *rdma.ID
	if c.isServer() {
		var err error
		if l, err = cmListen(c); err != nil {
			return err
		}
		defer l.Close()
	}
	if err := s.hs(0, ""); err != nil {
		return withLine(err, "Failed to exchange data between server and clients before creating RDMA CM connection.\n")
	}
	param := func() *rdma.ConnParam {
		p := &rdma.ConnParam{RetryCount: uint8(min(c.Retry, 7)), RNRRetryCount: uint8(min(c.Retry, 7))}
		if c.Verb == Read {
			p.ResponderResources, p.InitiatorDepth = uint8(c.OutReads), uint8(c.OutReads)
		}
		return p
	}
	newQP := func(id *rdma.ID) error {
		if r.pd == nil {
			dev := id.Device()
			if dev == nil {
				return fmt.Errorf("id has no device")
			}
			vctx, err := dev.Context()
			if err != nil {
				return err
			}
			r.vctx = vctx
			if err := r.create(size, false); err != nil {
				return err
			}
		}
		qp, err := id.CreateQP(r.pd, r.qpInit())
		if err != nil {
			return err
		}
		r.qps = append(r.qps, qp)
		r.ids = append(r.ids, id)
		return nil
	}
	if !c.isServer() {
		dst, err := serverAddr(c.Server, c.Port)
		if err != nil {
			return fail("Failed to get RDMA CM address info\n Failed to create RDMA CM connection with resources.\n")
		}
		var last error
		for attempt := 0; attempt < cmRetries; attempt++ {
			if attempt > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			if last = s.cmClientOnce(ctx, dst, param, newQP); last == nil {
				break
			}
		}
		if last != nil {
			return fail(fmt.Sprintf("Failed to connect RDMA CM client, tried %d times.\n Failed to create RDMA CM connection with resources.\n", cmRetries))
		}
	} else {
		for i := 0; i < c.NumQPs; i++ {
			id, err := l.GetRequest(ctx)
			if err == nil {
				if err = newQP(id); err != nil {
					id.Close()
				}
			}
			if err == nil {
				err = id.Accept(ctx, param())
			}
			if err != nil {
				return fail("Failed to handle RDMA CM connection request: " + err.Error() + "\n Failed to create RDMA CM connection with resources.\n")
			}
		}
	}
	if err := s.hs(0, ""); err != nil {
		return withLine(err, "Failed to exchange data between server and clients after creating RDMA CM connection.\n")
	}
	return nil
}

// cmListen is rdma_cm_server_connection's listener for the test QPs,
// on the same port as the exchange's (whose listener is gone by now).
func cmListen(c *Config) (*rdma.ID, error) {
	const failed = " Failed to create RDMA CM connection with resources.\n"
	l, err := rdma.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		return nil, fail("Failed to create RDMA CM ID.\n" + failed)
	}
	if err := l.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(c.Port))); err != nil {
		l.Close()
		return nil, fail("Failed to bind RDMA CM address on the server.\n" + failed)
	}
	if err := l.Listen(c.NumQPs); err != nil {
		l.Close()
		return nil, fail("Failed to listen on RDMA CM server listen ID.\n" + failed)
	}
	return l, nil
}

// cmClientOnce is one _rdma_cm_client_connection: every id resolved and
// connected, or all of this attempt's ids closed.
func (s *session) cmClientOnce(ctx context.Context, dst netip.AddrPort, param func() *rdma.ConnParam, newQP func(*rdma.ID) error) error {
	c, r := s.c, s.r
	fail := func(err error) error {
		for _, id := range r.ids {
			id.Close()
		}
		r.ids, r.qps = nil, nil
		return err
	}
	for i := 0; i < c.NumQPs; i++ {
		id, err := rdma.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
		if err != nil {
			return fail(err)
		}
		if err := resolve(ctx, id, dst, c.TOS); err != nil {
			id.Close()
			return fail(err)
		}
		if err := newQP(id); err != nil {
			id.Close()
			return fail(err)
		}
		if err := id.Connect(ctx, param()); err != nil {
			return fail(err)
		}
	}
	return nil
}
