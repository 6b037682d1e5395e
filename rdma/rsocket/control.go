package rsocket

import (
	"fmt"
	"net"
	"runtime"

	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// control runs a Dialer's or ListenConfig's Control hook on id, if any.
func control(f func(*rdma.ID) error, id *rdma.ID) error {
	if f == nil {
		return nil
	}
	if err := f(id); err != nil {
		return fmt.Errorf("control: %w", err)
	}
	return nil
}

// Control calls f with the connection's id and QP, for what net's
// SyscallConn gives a socket: statistics (id.QueryAddr, id.QueryPaths,
// qp.Query) and options (id.SetOption, qp.Modify of what the connection
// does not rely on, such as the ACK timeout). f runs with the
// connection's state locked and must return soon; it must not call the
// Conn's methods (they would wait for f), post on the QP, poll its CQ,
// change its state, or close or keep the id or the QP: the Conn owns
// them. Control returns f's error, or an error matching net.ErrClosed
// once the Conn is closed (f is then not called).
func (c *Conn) Control(f func(id *rdma.ID, qp *uverbs.QP) error) error {
	defer runtime.KeepAlive(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	if isClosed(c.closed) { // Close frees the QP under c.mu
		return c.opError("control", net.ErrClosed)
	}
	return f(c.id, c.res.qp)
}
