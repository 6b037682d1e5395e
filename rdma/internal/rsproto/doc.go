// Package rsproto is the wire format of librdmacm's rsockets (stream
// sockets, version 1), as rdma-core's librdmacm/rsocket.c defines it:
// the connection data carried in the CM REQ and REP private data (struct
// rs_conn_data), the scatter-gather entries one side writes into the
// other's target SGL array to grant receive buffer space (struct rs_sge),
// and the 32-bit message carried as the immediate data of every RDMA
// WRITE WITH IMM (rs_msg_set: op in bits 31-29, data in bits 28-0).
//
// Every decoder takes bytes from the peer and never panics on them.
package rsproto
