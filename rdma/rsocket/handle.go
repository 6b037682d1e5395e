package rsocket

import (
	"net"
	"runtime"
	"time"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// Conn is a stream connection over an RC QP, wire-compatible with
// librdmacm's rsockets (version 1, without iomap): a peer may be a C
// program using rsocket(3) (rstream, rcopy) or another Conn. It
// implements net.Conn; Read and Write may run at once in different
// goroutines, and blocked calls wake on their deadline, on Close and
// when the connection fails.
//
// Data goes as RDMA WRITE WITH IMM into the peer's receive buffer, as far
// as the peer's credits (receive buffer space and messages) allow; Read
// grants them back as it consumes data. An idle Conn costs no CPU: its
// progress goroutine waits on the CQ's completion channel, and a second
// one on the connection manager's events.
//
// A Conn that becomes unreachable without Close is closed by the
// garbage collector, as an os.File is: its QP, memory and goroutines are
// reclaimed. Relying on that is a bug; call Close.
type Conn struct {
	*conn   // what the goroutines hold: never the Conn itself
	cleanup runtime.Cleanup
}

// run starts the connection (see conn.run) and arranges for a Conn that
// is dropped without Close to be closed.
func (c *Conn) run(peer rsproto.ConnData, o connOpts) {
	c.conn.run(peer, o)
	// Close may wait for the linger time: not on the cleanup goroutine,
	// which all cleanups share.
	c.cleanup = runtime.AddCleanup(c, func(in *conn) { go in.close() }, c.conn)
}

// Read reads data the peer wrote (rrecv). Data that came before the peer
// closed can still be read; then Read returns io.EOF after the peer's
// CloseWrite or Close, or an error when the peer vanished without one
// (killed: one matching unix.ECONNRESET) or the connection failed (one
// matching unix.EIO for a failed completion, rsproto's ErrMalformed and
// unix.EPROTO for a peer that broke the protocol).
func (c *Conn) Read(b []byte) (int, error) {
	defer runtime.KeepAlive(c)
	return c.conn.read(b)
}

// Write writes b to the peer (rsend), waiting for credits as needed; it
// returns when all of b is handed to the QP (not yet read by the peer).
// After CloseWrite, or when the peer closed, it fails with an error
// matching unix.EPIPE or unix.ECONNRESET; when the connection failed,
// with Read's errors.
func (c *Conn) Write(b []byte) (int, error) {
	defer runtime.KeepAlive(c)
	return c.conn.write(b)
}

// CloseWrite shuts the sending side down (rshutdown SHUT_WR): the peer
// reads io.EOF after the data sent so far.
func (c *Conn) CloseWrite() error {
	defer runtime.KeepAlive(c)
	return c.shutdown("close write", true, false)
}

// CloseRead shuts the receiving side down (rshutdown SHUT_RD): Read
// returns io.EOF. The peer learns of it once both sides are shut.
func (c *Conn) CloseRead() error {
	defer runtime.KeepAlive(c)
	return c.shutdown("close read", false, true)
}

// Close disconnects, wakes blocked calls with net.ErrClosed and frees
// the connection's QP, memory and id. It sends rsocket's DISCONNECT, so
// that the peer reads io.EOF after the data sent, and waits for the
// sends in flight as SetLinger says, and never past the write deadline. Safe to call more than once.
func (c *Conn) Close() error {
	c.cleanup.Stop()
	defer runtime.KeepAlive(c)
	return c.conn.close()
}

// SetLinger sets how long Close (and CloseWrite's wait for a free
// control message) waits for data in flight, after net.TCPConn's
// SetLinger. sec < 0, the default, waits until the sends in flight and
// the DISCONNECT complete, for as long as they make progress: a live
// peer's QP acknowledges them whether or not its program reads, within
// a round trip on a clean wire but only after many seconds of
// retransmission on a lossy one, and rsockets' rclose waits for every
// send likewise; a peer that stays silent for the failure bound (see
// Dialer.FailureBound) ends the wait, or DefaultFailureBound where the
// Conn has none. sec == 0 waits for nothing, so that data in flight may
// be lost and the peer may see a reset rather than io.EOF; sec > 0
// waits at most sec seconds. Unlike TCP's, Close never goes on sending
// in the background: when it returns, the QP and buffers are gone.
func (c *Conn) SetLinger(sec int) error {
	defer runtime.KeepAlive(c)
	if isClosed(c.closed) {
		return c.opError("set linger", net.ErrClosed)
	}
	d := time.Duration(-1)
	if sec >= 0 {
		d = time.Duration(sec) * time.Second
	}
	c.mu.Lock()
	c.linger = d
	c.mu.Unlock()
	return nil
}

// LocalAddr is this side's address.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// SetDeadline sets both the read and the write deadline.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets when blocked and future Reads fail with an error
// matching os.ErrDeadlineExceeded; the zero time means never. A Read
// that is polling the completion queue sees it as soon as a sleeping one.
func (c *Conn) SetReadDeadline(t time.Time) error {
	defer runtime.KeepAlive(c)
	return c.setDeadline(c.rdl, t)
}

// SetWriteDeadline is SetReadDeadline for Write; it bounds Close and
// CloseWrite's wait for the sends in flight too.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	defer runtime.KeepAlive(c)
	return c.setDeadline(c.wdl, t)
}

var _ net.Conn = (*Conn)(nil)
