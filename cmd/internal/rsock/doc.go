// Package rsock is what the rsocket drop-ins (cmd/rstream, cmd/rcopy)
// share, as librdmacm's examples share common.c: the Network their
// sockets come from (rsockets over RDMA, or the kernel's TCP for
// rstream's "-T s"), address resolution worded as getaddrinfo's, and
// common.c's size and count formatting and data patterns.
//
// The programs speak net.Conn and net.Listener only; the RDMA side is
// one pair of functions, dialRDMA and listenRDMA in rdma.go, over
// package rdma's Dialer and ListenConfig.
package rsock
