package rsocket

import (
	"errors"
	"io"
	"net"
	"runtime"

	"golang.org/x/sys/unix"
)

// errBadCount is why ReadFrom or WriteTo stops when the source or the
// destination returns an impossible count (io's errInvalidWrite).
var errBadCount = errors.New("invalid count from the other io side")

// ReadFrom sends what r reads until io.EOF (io.ReaderFrom, which
// io.Copy(conn, r) uses): r reads straight into the registered send
// buffer, each read becoming one data message, with no copy in between.
// It waits for room in the send buffer before each read, so that a
// source with nothing left still waits for room once (as a Write would).
// Deadlines and errors are Write's; an error of r ends it too. While r
// blocks in Read, Close returns at once and the buffers are freed when
// r returns (what r read then is not sent).
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	defer runtime.KeepAlive(c)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ready(c.wdl); err != nil {
		return 0, c.opError("readfrom", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var done int64
	for {
		if err := c.waitSend(); err != nil {
			return done, c.opError("readfrom", err)
		}
		off := c.flow.sOff
		n := min(c.sendRoom(), c.res.sbufSize-off) // no wrap: one read
		if !c.bufs.acquire() {
			return done, c.opError("readfrom", net.ErrClosed)
		}
		buf := c.res.sbuf.Bytes()[off : off+n]
		c.mu.Unlock()
		k, err := r.Read(buf)
		c.bufs.release()
		c.mu.Lock()
		if isClosed(c.closed) { // the buffers may be gone
			return done, c.opError("readfrom", net.ErrClosed)
		}
		if k < 0 || k > n {
			k, err = 0, errBadCount
		}
		if k > 0 {
			if serr := c.sendState(); serr != nil {
				return done, c.opError("readfrom", serr)
			}
			c.sendRing(k)
			done += int64(k)
		}
		switch {
		case err == io.EOF:
			return done, nil
		case err != nil:
			return done, c.opError("readfrom", err)
		}
	}
}

// WriteBuffers writes the buffers of v and consumes them, as v.WriteTo
// does for net's connections with writev: they go through ReadFrom, so
// that consecutive buffers fill the send buffer as one data message
// each time (v.WriteTo(conn) would send one per buffer, since net keeps
// its writev to its own types).
func (c *Conn) WriteBuffers(v *net.Buffers) (int64, error) {
	defer runtime.KeepAlive(c)
	for _, b := range *v {
		if len(b) > 0 {
			return c.ReadFrom(v)
		}
	}
	*v = (*v)[:0]
	return 0, nil
}

// WriteTo writes what the peer sends to w until the peer closes
// (io.WriterTo, which io.Copy(w, conn) uses): w writes straight from
// the registered receive buffer, each unread stretch of a data message
// in one Write, with no copy in between; the peer is granted the space
// once w returns. Deadlines and errors are Read's (io.EOF ends it with
// a nil error); an error of w ends it too. While w blocks in Write,
// Close returns at once and the buffers are freed when w returns.
func (c *Conn) WriteTo(w io.Writer) (int64, error) {
	defer runtime.KeepAlive(c)
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if err := c.ready(c.rdl); err != nil {
		return 0, c.opError("writeto", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var done int64
	for {
		f := &c.flow
		err := c.wait(c.rdl, func() bool { return c.haveData() || !f.readable || f.err != nil })
		switch {
		case err != nil:
			return done, c.opError("writeto", err)
		case !c.haveData() && f.err != nil:
			return done, c.opError("writeto", f.err)
		case !c.haveData():
			return done, nil // io.EOF
		}
		off := f.rOff
		n := min(int(f.rmsg[f.rhead]), c.res.rbufSize-off)
		if !c.bufs.acquire() {
			return done, c.opError("writeto", net.ErrClosed)
		}
		buf := c.res.rbuf.Bytes()[off : off+n]
		c.mu.Unlock()
		k, err := w.Write(buf)
		c.bufs.release()
		c.mu.Lock()
		if isClosed(c.closed) {
			return done + int64(max(k, 0)), c.opError("writeto", net.ErrClosed)
		}
		if k < 0 || k > n {
			k, err = 0, errBadCount
		}
		c.consume(k)
		c.updateCredits()
		done += int64(k)
		if err == nil && k < n {
			err = io.ErrShortWrite
		}
		if err != nil {
			return done, c.opError("writeto", err)
		}
	}
}

// consume takes n read bytes off the head of the receive buffer, at
// most the rest of its first data message (readData without the copy).
func (c *conn) consume(n int) {
	f := &c.flow
	if n == int(f.rmsg[f.rhead]) {
		f.rhead = (f.rhead + 1) % len(f.rmsg)
		f.rseqNo++
	} else {
		f.rmsg[f.rhead] -= uint32(n)
	}
	f.rOff = (f.rOff + n) % c.res.rbufSize
	f.unread -= n
	f.rbufAvail += n
}

// waitSend waits, c.mu held, until a data message can go (canSend), and
// fails when it cannot go any more, on the deadline or on Close.
func (c *conn) waitSend() error {
	f := &c.flow
	err := c.wait(c.wdl, func() bool { return c.canSend() || !f.writable || !f.connected || f.err != nil })
	if err != nil {
		return err
	}
	return c.sendState()
}

// sendState is why no data can be sent, or nil.
func (c *conn) sendState() error {
	f := &c.flow
	switch {
	case f.err != nil:
		return f.err
	case !f.writable && f.connected:
		return unix.EPIPE
	case !f.connected:
		return errReset
	}
	return nil
}

// closeRes frees the connection's resources, its Mappings first
// (Close's last step, or the last ReadFrom's or WriteTo's after it).
func (c *conn) closeRes() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The Mappings' memory regions go before the PD.
	return errors.Join(c.closeMappings(), c.res.close())
}
