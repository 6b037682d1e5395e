package rsocket

import (
	"context"
	"net"
	"os"
	"time"
)

// SetDeadline sets when a blocked and future Accepts fail with an error
// matching os.ErrDeadlineExceeded, as net.TCPListener's; the zero time
// means never. AcceptConn goes by its context instead.
func (l *Listener) SetDeadline(t time.Time) error {
	if isClosed(l.hs.closed) {
		return &net.OpError{Op: "set deadline", Net: "rdma", Addr: l.addr, Err: net.ErrClosed}
	}
	l.dl.set(t)
	return nil
}

// acceptDeadline is AcceptConn until the listener's deadline.
func (l *Listener) acceptDeadline() (*Conn, error) {
	expired := l.dl.wait()
	if isClosed(expired) {
		return nil, &net.OpError{Op: "accept", Net: "rdma", Addr: l.addr, Err: os.ErrDeadlineExceeded}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-expired:
			cancel(os.ErrDeadlineExceeded)
		case <-stop:
		}
	}()
	c, err := l.hs.accept(ctx)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, &net.OpError{Op: "accept", Net: "rdma", Addr: l.addr, Err: err}
	}
	return c, nil
}
