package rsock

import (
	"context"
	"net"
	"time"

	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// dialRDMA connects an rsocket to address ("ip:port"), bound to
// o.Local when set, as rsocket, rbind and rconnect do. rsocket.Conn has no
// socket buffer or inline size to set: rsockets' defaults hold.
func dialRDMA(ctx context.Context, address string, o Options) (net.Conn, error) {
	d := rsocket.Dialer{KeepAlive: keepAlive(o.KeepAlive), IOMapSize: o.IOMap}
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
	SetBuffers(c, o.Buffer)
	return c, nil
}

// listenRDMA listens for rsockets on address ("ip:port"), as rsocket,
// rbind and rlisten do.
func listenRDMA(ctx context.Context, address string, o Options) (net.Listener, error) {
	lc := rsocket.ListenConfig{Backlog: o.Backlog, KeepAlive: keepAlive(o.KeepAlive), IOMapSize: o.IOMap}
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
