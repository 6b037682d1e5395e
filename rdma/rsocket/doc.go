// Package rsocket is librdmacm's rsockets in Go: byte streams over RDMA
// as a net.Conn and a net.Listener, wire-compatible with rsocket(3), so
// that either side may be a C program such as rstream or rcopy.
//
// Swap net.Dial("tcp", …) for rsocket.Dial("rdma", …) and net.Listen for
// rsocket.Listen; the networks are "rdma", "rdma4" and "rdma6" (IP
// addresses in rdma_cm's TCP port space), and the address of the RDMA
// device's interface (its GID) is what a peer dials:
//
//	l, err := rsocket.Listen("rdma", "10.0.0.1:7471")
//	...
//	c, err := rsocket.Dial("rdma", "10.0.0.1:7471")
//
// A connection is an RC QP made through package rdma's connection
// manager, with registered send and receive buffers. Data is written
// with RDMA WRITE WITH IMM into the peer's receive buffer as its credits
// allow; Read hands them back as it consumes. Deadlines, Close (which
// wakes blocked calls with net.ErrClosed), CloseWrite and CloseRead
// behave as net.TCPConn's; a peer's Close reads as io.EOF, a killed peer
// as an error matching unix.ECONNRESET. An idle connection parks its
// goroutines in the netpoller. A Listener runs each connection's
// handshake on its own, bounded in time and in number (ListenConfig's
// HandshakeTimeout and MaxHandshakes), so a client that stalls delays no
// other.
//
// What a net.TCPConn user reaches for is here, within what rsockets
// negotiates: buffer, queue and inline sizes are Dialer and ListenConfig
// fields (rsockets takes SO_SNDBUF, SO_RCVBUF and RDMA_* options only
// before it connects; the peer learns them from the connection data),
// keepalives have SetKeepAlive, SetKeepAlivePeriod and
// SetKeepAliveConfig, io.Copy goes through ReadFrom and WriteTo straight
// into and out of the registered buffers, WriteBuffers gathers
// net.Buffers, Dialer.Control and ListenConfig.Control set id options
// (TOS, ACK timeout) before connecting or binding, Conn.Control reaches
// the id and QP for statistics, and Listener.SetDeadline bounds Accept.
//
// rsockets' iomap (riomap, riowrite) is Conn.Map and Conn.WriteAt: one
// side maps a window of registered memory outside Go's heap, the other
// RDMA-writes into it by offset, without a message, and says so on the
// stream afterwards (see cmd/riostream). The windows a side may receive
// are bounded by the peer's IOMapSize (RDMA_IOMAPSIZE).
package rsocket
