package rsocket

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/rdmastack/rdmastack/rdma"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
)

// conn is a connection's state, which its goroutines share; the Conn
// handle that users hold points to it, so that a Conn dropped without
// Close can be collected and its cleanup close the conn.
type conn struct {
	id    *rdma.ID
	ch    *rdma.EventChannel // the id's channel, owned by the Conn
	res   rsResources
	laddr *Addr
	raddr *Addr

	rmu sync.Mutex // serializes Reads (rsocket's rlock)
	wmu sync.Mutex // serializes Writes (slock)

	mu      sync.Mutex // guards flow, the CQ, changed, linger and aborted
	flow    rsFlow
	iomap   rsIOMap
	changed chan struct{} // closed and replaced whenever flow changes and someone took it (changes)
	watched bool          // changes handed out changed since it was last replaced
	wcs     [16]uverbs.WC
	// The SGE lists of a message word's SEND and of a credit update's
	// WRITE, which the posts read (kept here: no allocation a message).
	wordSGE, sgeSGE [1]uverbs.SGE
	// fakePost, where set (the engine's tests), takes the posts in the
	// QP's place (see postSend).
	fakePost func(*uverbs.SendWR) error
	fake     fakeWR
	linger   time.Duration // how long Close waits for its sends (SetLinger; < 0: lingerUntil)
	aborted  bool          // the QP was moved to the error state after a failure

	rdl, wdl *deadline

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
	cancel    context.CancelFunc
	loops     sync.WaitGroup
	keepalive *time.Ticker
	pollTime  time.Duration // how long a wait polls before it sleeps

	bufs bufUse // ReadFrom's and WriteTo's use of the buffers
	ka   rsKeepAlive
	dog  rsWatchdog // guarded by mu
}

// newConn makes the Conn of an id whose resources are set up.
func newConn(id *rdma.ID, ch *rdma.EventChannel, res rsResources) *Conn {
	c := &conn{id: id, ch: ch, res: res, changed: make(chan struct{}), rdl: newDeadline(), wdl: newDeadline(),
		closed: make(chan struct{}), laddr: &Addr{}, raddr: &Addr{}, linger: -1}
	if a, err := id.QueryAddr(); err == nil {
		c.laddr, c.raddr = AddrFromAddrPort(a.Src), AddrFromAddrPort(a.Dst)
	}
	return &Conn{conn: c}
}

// connOpts is what a Dialer or ListenConfig says of the connections it
// makes once they run: keepalives every ka (none if < 0, 15s if 0),
// polling for poll (DefaultPollTime if 0, none if < 0), and the failure
// bound (see rsWatchdog).
type connOpts struct {
	ka, poll, failure time.Duration
	responder         bool // the Listener's side (see rsState.mute)
}

// run starts the connection on the peer's connection data: the progress
// goroutines, the first credit grant, the watchdog and keepalives.
func (c *conn) run(peer rsproto.ConnData, o connOpts) {
	switch {
	case o.poll == 0:
		c.pollTime = DefaultPollTime
	case o.poll > 0:
		c.pollTime = o.poll
	}
	c.mu.Lock()
	c.start(peer)
	c.flow.mute = o.responder && c.res.mode == msgSend
	attr := c.queryTransport()
	if c.res.mode == msgSend {
		// TCP carries iWARP: no packets of the path MTU to count, and no
		// ACK timeout to derive a bound from.
		c.flow.maxMsg = rsproto.MaxTransfer
		if attr != nil && attr.Timeout == 0 {
			attr = nil
		}
	} else {
		c.flow.maxMsg = maxMessage(attr)
	}
	c.startWatchdog(o.failure, attr)
	c.progress()
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.loops.Add(2)
	go c.cqLoop(ctx)
	go c.cmLoop(ctx)
	c.startKeepAlive(ctx, o.ka)
}

// broadcast wakes every waiter; c.mu is held. A channel nobody took
// (changes) stays: nobody waits on it, and a message that finds no
// sleeper costs no allocation.
func (c *conn) broadcast() {
	if !c.watched {
		return
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.watched = false
}

// changes is the channel the next broadcast closes; c.mu is held, and a
// waiter takes it before it lets c.mu go.
func (c *conn) changes() <-chan struct{} {
	c.watched = true
	return c.changed
}

// abort moves the QP of a failed connection to the error state and
// disconnects, once, c.mu held: a peer that broke the protocol or whose
// completions failed can write into our buffers no more, and learns
// that the connection is gone.
func (c *conn) abort() {
	if c.flow.err == nil || c.aborted || c.id == nil {
		return
	}
	c.aborted = true
	c.id.Disconnect() // the connection has failed already: nothing to add
}

// cqLoop is the progress engine: it applies completions as they come and
// sleeps on the completion channel in between (rs_process_cq's wait).
func (c *conn) cqLoop(ctx context.Context) {
	defer c.loops.Done()
	for {
		c.mu.Lock()
		if c.progress() {
			c.broadcast()
		}
		err := c.res.cq.RequestNotify(false)
		if c.progress() {
			c.broadcast()
		}
		c.mu.Unlock()
		if err == nil {
			_, err = c.res.cc.GetEvent(ctx)
		}
		if err != nil {
			if ctx.Err() == nil {
				c.mu.Lock()
				c.fail(err)
				c.broadcast()
				c.mu.Unlock()
			}
			return
		}
		c.res.cq.AckEvents(1)
	}
}

// cmLoop watches the connection manager: DISCONNECTED without the
// peer's disconnect message means the peer is gone.
func (c *conn) cmLoop(ctx context.Context) {
	defer c.loops.Done()
	for {
		ev, err := c.id.Channel().GetEvent(ctx)
		if err != nil {
			return
		}
		ev.Ack()
		if ev.ID != c.id {
			continue
		}
		switch ev.Type {
		case rdma.EventDisconnected, rdma.EventDeviceRemoval:
			c.mu.Lock()
			c.progress() // the peer's disconnect message comes before its DREQ
			if c.flow.connected || c.flow.readable {
				cause := errReset
				if ev.Type == rdma.EventDeviceRemoval {
					cause = rdma.ErrDeviceRemoved
				}
				c.flow.readable, c.flow.writable = false, false
				c.fail(cause)
			}
			c.broadcast()
			c.mu.Unlock()
		}
	}
}

func (c *conn) keepaliveLoop(ctx context.Context, tick <-chan time.Time) {
	defer c.loops.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			c.mu.Lock()
			c.keepAlive()
			c.mu.Unlock()
		}
	}
}

// wait waits, with c.mu held, until ready or the deadline or Close;
// c.mu is held again when it returns.
func (c *conn) wait(dl *deadline, ready func() bool) error {
	for {
		// Close frees the buffers (under c.mu) once it has closed c.closed.
		if isClosed(c.closed) {
			return net.ErrClosed
		}
		if ready() {
			return nil
		}
		expired := dl.wait()
		if c.poll(expired, ready) {
			return nil
		}
		if isClosed(expired) {
			return os.ErrDeadlineExceeded
		}
		ch := c.changes()
		c.mu.Unlock()
		select {
		case <-ch:
			c.mu.Lock()
		case <-expired:
			c.mu.Lock()
			return os.ErrDeadlineExceeded
		case <-c.closed:
			c.mu.Lock()
			return net.ErrClosed
		}
	}
}

// DefaultPollTime is the polling time of a Conn whose Dialer or
// ListenConfig leaves it 0. rsockets polls 10 µs by default on hardware;
// under emulation (the VM the benchmarks run in) 200 µs is what brings
// 64-byte streams level with rsockets', where 50 µs got 0.64 of them.
const DefaultPollTime = 200 * time.Microsecond

// poll polls the CQ, c.mu held, for at most the Conn's polling time,
// letting other goroutines run in between, and reports whether ready
// came true. It stops early when expired (the deadline's channel) is
// closed, so that a deadline is never later than one round of the loop.
func (c *conn) poll(expired <-chan struct{}, ready func() bool) bool {
	if c.pollTime <= 0 {
		return false
	}
	start := time.Now()
	for !isClosed(c.closed) && !isClosed(expired) { // Close frees the CQ under c.mu
		if c.progress() {
			c.broadcast()
		}
		if ready() {
			return true
		}
		// The last look is taken with c.mu held, so that the caller
		// picks up c.changes() after it: a change while c.mu was let go
		// is never missed.
		if time.Since(start) >= c.pollTime {
			return false
		}
		c.mu.Unlock()
		runtime.Gosched()
		c.mu.Lock()
	}
	return false
}

func (c *conn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &net.OpError{Op: op, Net: "rdma", Source: c.laddr, Addr: c.raddr, Err: err}
}

// ready checks the calls that return at once: Close and a passed
// deadline.
func (c *conn) ready(dl *deadline) error {
	if isClosed(c.closed) {
		return net.ErrClosed
	}
	if isClosed(dl.wait()) {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// read is Read (rrecv).
func (c *conn) read(b []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if err := c.ready(c.rdl); err != nil {
		return 0, c.opError("read", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.flow.readable && c.flow.err == nil && !c.haveData() {
		return 0, io.EOF
	}
	if len(b) == 0 {
		return 0, nil
	}
	err := c.wait(c.rdl, func() bool { return c.haveData() || !c.flow.readable || c.flow.err != nil })
	if err != nil {
		return 0, c.opError("read", err)
	}
	if !c.haveData() {
		if c.flow.err != nil {
			return 0, c.opError("read", c.flow.err)
		}
		return 0, io.EOF
	}
	n := c.readData(b)
	c.updateCredits()
	return n, nil
}

// write is Write (rsend).
func (c *conn) write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ready(c.wdl); err != nil {
		return 0, c.opError("write", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	done := 0
	for done < len(b) {
		if err := c.waitSend(); err != nil {
			return done, c.opError("write", err)
		}
		done += c.writeData(b[done:])
	}
	return done, nil
}

// shutdown is rshutdown: it stops this side's writing, reading or both,
// and tells the peer with SHUTDOWN (writing stopped, still reading) or
// DISCONNECT (both).
func (c *conn) shutdown(op string, wr, rd bool) error {
	if isClosed(c.closed) {
		return c.opError(op, net.ErrClosed)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	until := c.lingerUntil()
	defer until.stop()
	c.shutdownLocked(wr, rd, until, c.closed)
	return nil
}

// shutdownLocked is shutdown with c.mu held; when no control message
// may be sent, it waits for one as lingerWait does.
func (c *conn) shutdownLocked(wr, rd bool, until *deadline, stop <-chan struct{}) {
	f := &c.flow
	if !f.connected {
		return
	}
	was := f.rsState
	if wr {
		f.writable = false
	}
	if rd {
		f.readable = false
	}
	var ctrl rsproto.Ctrl
	switch {
	case !f.writable && !f.readable:
		ctrl = rsproto.CtrlDisconnect
	case !f.writable && was.writable:
		ctrl = rsproto.CtrlShutdown
	default:
		c.broadcast()
		return // reading stopped, writing goes on: the peer needs not know
	}
	// A mute responder (iWARP: the initiator has not spoken yet) may
	// send nothing, and never may if the initiator never speaks: it
	// tells nothing and waits for nothing; closing the id ends the
	// connection.
	if !c.ctrlAvail() && !f.mute {
		c.lingerWait(until, stop, func() bool { return c.ctrlAvail() || !f.connected })
	}
	if f.connected && c.ctrlAvail() {
		c.postCtrl(rsproto.MakeMsg(rsproto.OpCtrl, uint32(ctrl)))
	}
	c.broadcast()
}

// lingerUntil is when a wait for the sends in flight gives up, c.mu
// held: after the linger time if one was set (> 0); by default (< 0)
// never, as long as they make progress, since the watchdog fails the
// connection once they make none for its failure bound; where the Conn
// has no failure bound, after DefaultFailureBound.
func (c *conn) lingerUntil() *deadline {
	until := newDeadline()
	switch {
	case c.linger > 0:
		until.set(time.Now().Add(c.linger))
	case c.linger < 0 && c.dog.timer == nil:
		until.set(time.Now().Add(DefaultFailureBound))
	}
	return until
}

// lingerWait waits, c.mu held, until ready, until passes, the write
// deadline passes, or stop is closed; a linger time of 0 waits for
// nothing.
func (c *conn) lingerWait(until *deadline, stop <-chan struct{}, ready func() bool) {
	for c.linger != 0 && !ready() {
		ch := c.changes()
		c.mu.Unlock()
		select {
		case <-ch:
		case <-until.wait():
			c.mu.Lock()
			return
		case <-c.wdl.wait():
			c.mu.Lock()
			return
		case <-stop:
			c.mu.Lock()
			return
		}
		c.mu.Lock()
	}
}

// close is Close: once, it closes c.closed (failing blocked and later
// calls), sends rsocket's DISCONNECT and waits at most the linger time
// (and never past the write deadline) for the sends in flight, then
// frees the connection's QP, memory and id.
func (c *conn) close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.mu.Lock()
		c.broadcast()
		if c.flow.connected {
			until := c.lingerUntil()
			c.shutdownLocked(true, true, until, nil)
			c.lingerWait(until, nil, c.allSendsDone)
			until.stop()
		}
		c.flow.connected = false
		c.mu.Unlock()
		c.stopWatchdog()
		c.ka.mu.Lock()
		if c.keepalive != nil {
			c.keepalive.Stop()
		}
		c.ka.mu.Unlock()
		if c.cancel != nil {
			c.cancel()
		}
		c.loops.Wait()
		c.rdl.stop()
		c.wdl.stop()
		err := c.id.Close()
		if c.ch != nil {
			err = errors.Join(err, c.ch.Close())
		}
		err = errors.Join(err, c.bufs.close(c.closeRes))
		if err != nil {
			c.closeErr = c.opError("close", err)
		}
	})
	return c.closeErr
}

// setDeadline sets the read or the write deadline.
func (c *conn) setDeadline(dl *deadline, t time.Time) error {
	if isClosed(c.closed) {
		return c.opError("set deadline", net.ErrClosed)
	}
	dl.set(t)
	return nil
}
