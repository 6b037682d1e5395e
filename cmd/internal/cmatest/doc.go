// Package cmatest is what rdma-core's rdmacm-utils examples cmatose.c,
// udaddy.c and mckey.c share, under the name of their struct cmatest:
// the run around the test (event channel, nodes, "test complete",
// "return status"), a server's listening id and a client's resolution,
// connect_handler's accept or reject, cma_handler's dispatch, and the
// node (struct cmatest_node) with init_node, create_message, post_recvs
// and post_sends, for RC (cmatose) and UD (udaddy, mckey). Messages it
// prints carry the program's name, as the C ones do.
package cmatest
