// Package nldev is a typed client for the kernel's RDMA netlink interface
// (NETLINK_RDMA, the RDMA_NLDEV_* commands of include/uapi/rdma/rdma_netlink.h),
// the interface iproute2's rdma tool speaks. It needs no rdma-core and no cgo.
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
