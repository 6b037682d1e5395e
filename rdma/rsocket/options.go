package rsocket

import (
	"errors"
	"fmt"
	"net"
	"runtime"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// Bounds of the buffer sizes a Dialer or ListenConfig asks for.
const (
	// minBuf is the smallest buffer: rsockets' floor for the send
	// buffer (twice RS_SNDLOWAT), which we apply to both.
	minBuf = 2 * rsproto.SendLowWater
	// maxBuf is the largest buffer: the kernel's ceiling for a socket
	// buffer is a sysctl, ours is a constant.
	maxBuf = 1 << 30
	// minQueue is RS_QP_MIN_SIZE, the smallest work queue.
	minQueue = 16
)

// rsSizes are the sizes rsockets negotiates when it connects: its send
// and receive buffers (rs->sbuf_size, rbuf_size), its work queues
// (sq_size, rq_size) and its inline size (sq_inline). The peer learns
// the receive side from the connection data: the receive queue as its
// credits, half the receive buffer as the first target it writes to;
// each side sizes its own send side.
type rsSizes struct {
	sbuf, rbuf int
	sq, rq     int
	inline     int
}

// sizesOf is what the options of a Dialer or ListenConfig ask for, as
// rsetsockopt takes them: SO_SNDBUF and SO_RCVBUF give twice the value
// (as Linux does for TCP; rsockets too), RDMA_SQSIZE, RDMA_RQSIZE and
// RDMA_INLINE at most RS_QP_MAX_SIZE. Zero is rsockets' default;
// inline < 0 is none (RDMA_INLINE 0).
func sizesOf(read, write, sq, rq, inline int) rsSizes {
	s := rsSizes{sbuf: rsproto.DefaultBufSize, rbuf: rsproto.DefaultBufSize,
		sq: rsproto.DefaultQPSize, rq: rsproto.DefaultQPSize, inline: rsproto.DefaultInline}
	buf := func(v int) int { return min(max(2*min(v, maxBuf), minBuf), maxBuf) }
	if read > 0 {
		s.rbuf = buf(read)
	}
	if write > 0 {
		s.sbuf = buf(write)
	}
	if sq > 0 {
		s.sq = min(sq, rsproto.QPMaxSize)
	}
	if rq > 0 {
		s.rq = min(rq, rsproto.QPMaxSize)
	}
	switch {
	case inline > 0:
		s.inline = min(inline, rsproto.QPMaxSize)
	case inline < 0:
		s.inline = 0
	}
	return s
}

// fitQueues is rs_set_qp_size: each work queue between RS_QP_MIN_SIZE
// and the device's most (devMax, 0 when unknown) and RS_QP_MAX_SIZE.
func (s *rsSizes) fitQueues(devMax int) {
	m := rsproto.QPMaxSize
	if devMax > 0 {
		m = min(m, devMax)
	}
	s.sq = min(max(s.sq, minQueue), m)
	s.rq = min(max(s.rq, minQueue), m)
}

func (d *Dialer) sizes() rsSizes {
	return sizesOf(d.ReadBuffer, d.WriteBuffer, d.SendQueue, d.RecvQueue, d.Inline)
}

func (lc *ListenConfig) sizes() rsSizes {
	return sizesOf(lc.ReadBuffer, lc.WriteBuffer, lc.SendQueue, lc.RecvQueue, lc.Inline)
}

// errSized is why SetReadBuffer and SetWriteBuffer fail on an
// established connection.
var errSized = errors.New("rsocket buffers are sized when the connection is set up")

// SetReadBuffer would size the receive buffer, as SO_RCVBUF: the ring
// the peer writes into is twice bytes. rsockets sizes its buffers when it
// connects and ignores the option afterwards (rsetsockopt returns 0),
// and a Conn is always connected: so SetReadBuffer changes nothing. It
// returns nil when bytes asks for the size the Conn has (what Dialer's
// or ListenConfig's ReadBuffer gave), and otherwise an error matching
// errors.ErrUnsupported: set ReadBuffer on the Dialer or ListenConfig
// instead.
func (c *Conn) SetReadBuffer(bytes int) error {
	defer runtime.KeepAlive(c)
	return c.setBuffer("set read buffer", bytes, func(r *rsResources) int { return r.rbufSize })
}

// SetWriteBuffer is SetReadBuffer for the send buffer (SO_SNDBUF), which
// only this side's sends use.
func (c *Conn) SetWriteBuffer(bytes int) error {
	defer runtime.KeepAlive(c)
	return c.setBuffer("set write buffer", bytes, func(r *rsResources) int { return r.sbufSize })
}

func (c *conn) setBuffer(op string, bytes int, size func(*rsResources) int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if isClosed(c.closed) { // Close frees the resources under c.mu
		return c.opError(op, net.ErrClosed)
	}
	if bytes > 0 && sizesOf(bytes, 0, 0, 0, 0).rbuf == size(&c.res) {
		return nil
	}
	return c.opError(op, fmt.Errorf("%w: %w", errSized, errors.ErrUnsupported))
}
