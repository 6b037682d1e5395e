// Package nldev is how a program does what iproute2's rdma tool does: list
// the RDMA devices, ports and links, read their resources (QPs, CQs, MRs,
// PDs, cm_ids, contexts) and counters, add and delete rxe and siw links,
// and change settings (names, network namespaces, counter modes). It is
// a typed client for the kernel's RDMA netlink interface (NETLINK_RDMA,
// the RDMA_NLDEV_* commands of include/uapi/rdma/rdma_netlink.h) and
// needs no rdma-core and no cgo.
//
// Open a Client with Dial and ask it questions:
//
//	c, err := nldev.Dial()
//	if err != nil {
//		// errors.Is(err, nldev.ErrNoRDMA) on a kernel without RDMA.
//	}
//	defer c.Close()
//	devs, err := c.Devices()
//
// Errors name the operation, keep the kernel's errno (errors.Is(err,
// unix.EINVAL)) and its extended-acknowledgement text, and answer
// errors.Is for os.ErrNotExist (unknown device) and os.ErrPermission
// (no CAP_NET_ADMIN).
package nldev
