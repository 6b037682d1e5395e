package rsock

import (
	"context"
	"net"
	"time"

	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// dialRDMA connects an rsocket to address ("ip:port"), bound to
// o.Local when set, as rsocket, rbind and rconnect do, with o's buffer
// and inline sizes, which rsockets takes before it connects.
func dialRDMA(ctx context.Context, address string, o Options) (net.Conn, error) {
	d := rsocket.Dialer{KeepAlive: keepAlive(o.KeepAlive), ReadBuffer: o.Buffer, WriteBuffer: o.Buffer,
		Inline: inline(o.Inline), IOMapSize: o.IOMap}
	if o.Local != "" {
		a, err := net.ResolveTCPAddr("tcp", withPort(o.Local))
		if err != nil {
			return nil, err
		}
		d.LocalAddr = a
	}
	c, err := d.DialContext(ctx, "rdma", address)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// listenRDMA listens for rsockets on address ("ip:port"), as rsocket,
// rbind and rlisten do; the accepted connections have o's buffer and
// inline sizes, as rsockets' accepted sockets take the listener's.
func listenRDMA(ctx context.Context, address string, o Options) (net.Listener, error) {
	lc := rsocket.ListenConfig{Backlog: o.Backlog, KeepAlive: keepAlive(o.KeepAlive), ReadBuffer: o.Buffer,
		WriteBuffer: o.Buffer, Inline: inline(o.Inline), IOMapSize: o.IOMap}
	return lc.Listen(ctx, "rdma", address)
}

// keepAlive is rsocket's keepalive interval for d: rsockets keep none
// unless SO_KEEPALIVE is set (rsocket's 0 would be 15s).
func keepAlive(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// inline is rsocket's Inline for Options' Inline: -1 (rsockets' default)
// is 0, 0 (none) is -1.
func inline(n int) int {
	switch {
	case n < 0:
		return 0
	case n == 0:
		return -1
	}
	return n
}
