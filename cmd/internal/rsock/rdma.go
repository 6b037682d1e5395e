package rsock

import (
	"context"
	"errors"
	"net"
)

// ErrNoRDMA is what the RDMA network returns while package rdma has no
// rsocket connection to offer.
var ErrNoRDMA = errors.New("rsockets over RDMA are not available in this build")

// dialRDMA connects an rsocket to address ("host:port").
//
// TODO(#16): rdma.Dialer{KeepAlive: o.KeepAlive, LocalAddr: ...}.DialContext(ctx, "rdma", address),
// then SetBuffers and the inline size, once package rdma has Conn.
func dialRDMA(ctx context.Context, address string, o Options) (net.Conn, error) {
	return nil, &net.OpError{Op: "dial", Net: "rdma", Err: ErrNoRDMA}
}

// listenRDMA listens for rsockets on address ("host:port").
//
// TODO(#16): rdma.ListenConfig{Backlog: o.Backlog, KeepAlive: o.KeepAlive}.Listen(ctx, "rdma", address).
func listenRDMA(ctx context.Context, address string, o Options) (net.Listener, error) {
	return nil, &net.OpError{Op: "listen", Net: "rdma", Err: ErrNoRDMA}
}
