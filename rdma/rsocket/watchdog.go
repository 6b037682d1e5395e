package rsocket

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
)

// ErrPeerSilent is the cause of a connection whose sends went
// unacknowledged for longer than its failure bound: the peer, or the
// path to it, is gone. It matches unix.ETIMEDOUT, as a TCP connection
// past its user timeout does.
var ErrPeerSilent = fmt.Errorf("rdma: the peer acknowledged nothing within the failure bound: %w", unix.ETIMEDOUT)

// rsWatchdog bounds how long a connection's sends may go without an
// acknowledgement, c.mu guarding it. The RC transport's retry count
// cannot: rxe takes 7, rsockets' C dialers' count and ours, for "retry
// for ever"; and the transport's own budget is too tight for a lossy
// wire on rxe, which ignores sequence-error NAKs while a retransmission
// is under way and so waits out an ACK timeout for each one that meets
// loss or reordering again (seen: 3.4-4.9 s without an acknowledgement
// against a budget of 4.3 s, netem's 1% loss and 5% reordering on a
// live wire). The watchdog counts time: from the first send posted
// while none was in flight, or the last send completion, to now.
type rsWatchdog struct {
	bound time.Duration // 0: none
	timer *time.Timer   // fires at since+bound while armed
	armed bool
	idle  bool      // no send in flight
	since time.Time // when the sends in flight last made progress
	acked bool      // a send completed in this progress pass
	// longest is the longest wait for an acknowledgement so far, as
	// the progress passes saw it (for tests and their logs).
	longest time.Duration
}

// failureBound is a connection's default failure bound: twice the
// time the QP's transport takes to give up on an unacknowledged packet,
// its ACK timeout, 4.096 µs × 2^Timeout, times one send and RetryCnt
// retries. A Timeout of 0 (wait for ever) means no bound.
func failureBound(attr uverbs.QPAttr) time.Duration {
	if attr.Timeout == 0 {
		return 0
	}
	return 2 * ackTimeoutUnit << min(attr.Timeout, 31) * time.Duration(attr.RetryCnt+1)
}

// queryTransport is the QP's ACK timeout, retry count and path MTU, or
// nil where the QP cannot be asked (the engine's tests have none).
func (c *conn) queryTransport() *uverbs.QPAttr {
	if c.res.qp == nil {
		return nil
	}
	attr, err := c.res.qp.Query(uverbs.QPAttrTimeout | uverbs.QPAttrRetryCnt | uverbs.QPAttrPathMTU)
	if err != nil {
		return nil
	}
	return attr
}

// startWatchdog sets the watchdog up: bound if > 0, none if < 0, and if
// 0 failureBound of the QP's own ACK timeout and retry count in attr
// (the peer's request chose the count on a Listener's side), or
// DefaultFailureBound where attr is nil.
func (c *conn) startWatchdog(bound time.Duration, attr *uverbs.QPAttr) {
	c.dog.idle = true
	if bound == 0 {
		bound = DefaultFailureBound
		if attr != nil {
			bound = failureBound(*attr)
		}
	}
	if bound > 0 {
		c.dog.bound = bound
		c.dog.timer = time.AfterFunc(time.Hour, c.watch)
		c.dog.timer.Stop()
	}
}

// sent notes a send just posted, c.mu held: the first in flight starts
// the clock.
func (c *conn) sent() {
	d := &c.dog
	if !d.idle || d.timer == nil {
		return
	}
	d.idle, d.since = false, time.Now()
	if !d.armed {
		d.armed = true
		d.timer.Reset(d.bound)
	}
}

// progressed notes the end of a progress pass, c.mu held: a send that
// completed restarts the clock, or stops it when none is left in
// flight.
func (c *conn) progressed() {
	d := &c.dog
	if !d.acked {
		return
	}
	d.acked = false
	if d.idle {
		return
	}
	now := time.Now()
	d.longest = max(d.longest, now.Sub(d.since))
	if c.sendsInFlight() == 0 {
		d.idle = true
	} else {
		d.since = now
	}
}

// sendsInFlight is how many send work requests are posted and not
// completed.
func (c *conn) sendsInFlight() int {
	f := &c.flow
	return c.res.sqSize - int(f.ctrlMax-f.ctrlSeqNo) - f.sqeAvail
}

// watch is the timer's: it picks up what completed, and fails the
// connection if its sends are still stuck past the bound; otherwise it
// sleeps until they could be.
func (c *conn) watch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := &c.dog
	d.armed = false
	// Close's linger wait still needs the watchdog; Close marks the
	// connection down before it frees anything.
	if !c.flow.connected {
		return
	}
	if c.progress() {
		c.broadcast()
	}
	if d.idle || !c.flow.connected {
		return
	}
	if left := d.bound - time.Since(d.since); left > 0 {
		d.armed = true
		d.timer.Reset(left)
		return
	}
	c.fail(fmt.Errorf("%d sends unacknowledged for %v: %w", c.sendsInFlight(), d.bound, ErrPeerSilent))
}

// stopWatchdog stops the timer for Close, after its linger wait; a
// watch already running finds the connection down.
func (c *conn) stopWatchdog() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dog.timer != nil {
		c.dog.timer.Stop()
		c.dog.armed = false
	}
}
