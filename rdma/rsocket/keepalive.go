package rsocket

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"
)

// defaultKeepAlive is the keepalive interval when none is given, as
// net.Dialer's.
const defaultKeepAlive = 15 * time.Second

// rsKeepAlive is a Conn's keepalive setting: probes every period while
// on (rsockets' RS_OPT_KEEPALIVE and keepalive_time). The goroutine that
// sends them starts when they are first turned on; its ticker is stopped
// while they are off.
type rsKeepAlive struct {
	mu     sync.Mutex
	on     bool
	period time.Duration
	ctx    context.Context // the Conn's goroutines' context
}

// startKeepAlive sets keepalives up, probing every ka (none if ka < 0,
// defaultKeepAlive if 0); the keepalive goroutine stops when ctx ends.
func (c *conn) startKeepAlive(ctx context.Context, ka time.Duration) {
	c.ka.ctx, c.ka.period = ctx, ka
	if ka <= 0 {
		c.ka.period = defaultKeepAlive
	}
	if ka >= 0 {
		c.keepAliveOn()
	}
}

// keepAliveOn starts the probes, c.ka.mu held (or before the Conn is
// handed out), and the Conn not closed: Close stops the ticker under
// c.ka.mu before it waits for the goroutines.
func (c *conn) keepAliveOn() {
	c.ka.on = true
	if c.keepalive != nil {
		c.keepalive.Reset(c.ka.period)
		return
	}
	c.keepalive = time.NewTicker(c.ka.period)
	c.loops.Add(1)
	go c.keepaliveLoop(c.ka.ctx, c.keepalive.C)
}

// SetKeepAlive turns keepalive probes on or off (SO_KEEPALIVE): rsocket's
// 0-byte RDMA writes, which the peer's application never sees, but whose
// failure (after the RC transport's own retries) fails the connection
// when the peer is gone. They are on at the Dialer's or ListenConfig's
// KeepAlive interval unless that is < 0.
func (c *Conn) SetKeepAlive(on bool) error {
	defer runtime.KeepAlive(c)
	return c.setKeepAlive("set keepalive", on, 0)
}

// SetKeepAlivePeriod sets the interval of keepalive probes (TCP_KEEPIDLE,
// rsockets' keepalive_time), which takes effect at once when they are on
// and when SetKeepAlive turns them on. rsockets probes every interval;
// unlike TCP it does not wait for the connection to be idle. d must be
// positive.
func (c *Conn) SetKeepAlivePeriod(d time.Duration) error {
	defer runtime.KeepAlive(c)
	if d <= 0 {
		return c.opError("set keepalive period", fmt.Errorf("period %v: %w", d, errInvalid))
	}
	c.ka.mu.Lock()
	on := c.ka.on
	c.ka.mu.Unlock()
	return c.setKeepAlive("set keepalive period", on, d)
}

// SetKeepAliveConfig is net.TCPConn's SetKeepAliveConfig: Enable turns
// probes on or off, Idle is their interval (0 means 15s, < 0 leaves it).
// Interval and Count have no meaning here, as for rsockets
// (TCP_KEEPINTVL, TCP_KEEPCNT): the RC transport retries a probe and
// reports its loss itself.
func (c *Conn) SetKeepAliveConfig(config net.KeepAliveConfig) error {
	defer runtime.KeepAlive(c)
	d := config.Idle
	if d == 0 {
		d = defaultKeepAlive
	}
	return c.setKeepAlive("set keepalive config", config.Enable, max(d, 0))
}

// setKeepAlive turns probes on or off, every period (0 leaves it).
func (c *conn) setKeepAlive(op string, on bool, period time.Duration) error {
	c.ka.mu.Lock()
	defer c.ka.mu.Unlock()
	if isClosed(c.closed) || c.ka.ctx == nil {
		return c.opError(op, net.ErrClosed)
	}
	if period > 0 {
		c.ka.period = period
	}
	switch {
	case on:
		c.keepAliveOn()
	case c.keepalive != nil:
		c.ka.on = false
		c.keepalive.Stop()
	}
	return nil
}
