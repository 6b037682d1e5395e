// Package cmnode is what the rdmacm-utils drop-ins (rping, ucmatose,
// udaddy, mckey, rdma_server, rdma_client) share: C-style exit
// statuses, address lookup with getaddrinfo's failure texts and
// common.c's get_rdma_addr, the C value of an event's status, and a
// connection's verbs resources (PD, CQs, registered buffers, the id's
// QP) with one Close.
package cmnode
