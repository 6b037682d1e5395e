package rsock

import (
	"context"
	"net"
	"time"
)

// Options are the socket options the programs set before connecting
// or listening (rstream's set_options; rcopy sets none).
type Options struct {
	KeepAlive time.Duration // SO_KEEPALIVE with TCP_KEEPIDLE; 0 leaves it off
	Buffer    int           // SO_SNDBUF and SO_RCVBUF; 0 leaves the default
	Inline    int           // RDMA_INLINE (rsockets only); -1 leaves the default
	Backlog   int           // listen(2)'s backlog
	Local     string        // a client's bind address ("host" or "host:port"); "" for none
	IOMap     int           // RDMA_IOMAPSIZE (rsockets only): windows the peer may map
}

// Network makes a program's sockets: Name is what errors call it.
type Network struct {
	Name   string
	Dial   func(ctx context.Context, address string, o Options) (net.Conn, error)
	Listen func(ctx context.Context, address string, o Options) (net.Listener, error)
}

// RDMA is rsockets: librdmacm's protocol over an RC connection
// (package rdma's Conn).
var RDMA = Network{Name: "rdma", Dial: dialRDMA, Listen: listenRDMA}

// TCP is the kernel's TCP, as the C programs use with use_rs = 0.
var TCP = Network{Name: "tcp", Dial: dialTCP, Listen: listenTCP}

func dialTCP(ctx context.Context, address string, o Options) (net.Conn, error) {
	d := net.Dialer{KeepAlive: -1}
	if o.KeepAlive > 0 {
		d.KeepAlive = o.KeepAlive
	}
	if o.Local != "" {
		a, err := net.ResolveTCPAddr("tcp", withPort(o.Local))
		if err != nil {
			return nil, err
		}
		d.LocalAddr = a
	}
	c, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	SetBuffers(c, o.Buffer)
	return c, nil
}

func listenTCP(ctx context.Context, address string, o Options) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	if o.KeepAlive > 0 {
		lc.KeepAlive = o.KeepAlive
	}
	return lc.Listen(ctx, "tcp", address)
}

// withPort gives a bare host port 0.
func withPort(s string) string {
	if _, _, err := net.SplitHostPort(s); err == nil {
		return s
	}
	return net.JoinHostPort(s, "0")
}

// SetBuffers sets SO_SNDBUF and SO_RCVBUF on c where its type can (a
// TCP connection); n <= 0 leaves them. An rsocket.Conn has the same
// methods, but sizes its buffers when it connects (Options reach its
// Dialer and ListenConfig): on it they change nothing.
func SetBuffers(c net.Conn, n int) {
	if n <= 0 {
		return
	}
	if b, ok := c.(interface{ SetReadBuffer(int) error }); ok {
		b.SetReadBuffer(n)
	}
	if b, ok := c.(interface{ SetWriteBuffer(int) error }); ok {
		b.SetWriteBuffer(n)
	}
}

// CloseWrite half-closes c where it can (shutdown(SHUT_WR)).
func CloseWrite(c net.Conn) {
	if w, ok := c.(interface{ CloseWrite() error }); ok {
		w.CloseWrite()
	}
}
