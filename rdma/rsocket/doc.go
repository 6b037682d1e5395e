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
// allow; Read hands them back as it consumes. On iWARP (Soft-iWARP,
// siw), which has no immediate data, the connection speaks rsockets'
// iWARP protocol as rdma-core's does there: each message is an RDMA
// WRITE followed by a SEND of the 32-bit word the immediate would have
// carried, so that a program works unchanged on either and talks to
// rdma-core's rsockets on both. iWARP's retransmission is TCP's: its QPs
// have no ACK timeout, and a connection there fails when its sends stay
// uncompleted for DefaultFailureBound unless FailureBound says
// otherwise. Deadlines, Close (which
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
// A peer that goes silent (its machine gone, the wire cut) is noticed
// by its silence: the RC transport sends a packet again when no
// acknowledgement came within the ACK timeout, and a connection whose
// sends go unacknowledged for its failure bound fails: blocked and later
// calls return an error matching ErrPeerSilent and unix.ETIMEDOUT (or,
// where the transport's retries run out first, a *CompletionError with
// status uverbs.WCRetryExcErr, matching unix.EIO). Dialer's AckTimeout,
// RetryCount and FailureBound set them (ListenConfig's AckTimeout and
// FailureBound; the retry count is always the dialer's, which the
// connection request carries). By default the bound is twice the
// transport's own budget, 2 × (retries + 1) × ACK timeout: with 537 ms
// and 7 retries, DefaultFailureBound (about 8.6s) from the last
// acknowledgement. On rxe, whose 7 retries never end, an outage shorter
// than that, less an ACK timeout, is survived; where the transport
// counts 7 retries, one shorter than its budget, half the bound. A
// connection with nothing in flight, a Read that waits for data for
// instance, sends its next keepalive probe within KeepAlive (15s), so
// it fails within KeepAlive plus its bound. A killed peer is quicker:
// its kernel disconnects, and calls fail at once with unix.ECONNRESET.
//
// The bound is the Conn's own rather than the transport's because rxe
// (Soft-RoCE) takes 7 retries, rsockets' C dialers' count and ours, for
// "retry for ever", and counts them per work request; and because on a
// lossy wire rxe waits out an ACK timeout for each retransmission that
// meets loss or reordering again, so that a live connection can go
// seconds without an acknowledgement. rsockets in C keep the kernel's
// ACK timeout (2^17 × 4.096 µs on Linux 6.12's RoCE, 2^19 on 6.1's) and
// send keepalives only when SO_KEEPALIVE asks, every tcp_keepalive_time
// (2 hours); on rxe they never notice a silent peer.
//
// The two sides' wires may differ in MTU. RoCE's connection manager
// gives both QPs the dialer's path MTU, so rdma-core's rsockets fail to
// move data when the side with the larger MTU dials. Ours agree on the
// smaller: each side announces its port's active MTU in a byte of the
// connection data that rdma-core zeroes and ignores, and both QPs go to
// RTR with the smaller of the two (rdma.ConnParam.PeerPathMTU). With a C
// peer nothing changes.
//
// rsockets' iomap (riomap, riowrite) is Conn.Map and Conn.WriteAt: one
// side maps a window of registered memory outside Go's heap, the other
// RDMA-writes into it by offset, without a message, and says so on the
// stream afterwards (see cmd/riostream). The windows a side may receive
// are bounded by the peer's IOMapSize (RDMA_IOMAPSIZE).
package rsocket
