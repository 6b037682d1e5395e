// Package nlabi holds the raw RDMA netlink ABI: the message-type
// arithmetic, client and group numbers, and the RDMA_NLDEV_* command and
// attribute numbers of include/uapi/rdma/rdma_netlink.h, under their C
// names. Nothing here knows what a device is; package nldev turns these
// numbers into Go types.
//
// The header installed on Debian bookworm (linux-libc-dev 6.1) stops at
// RDMA_NLDEV_CMD_STAT_GET_STATUS and RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC;
// the later numbers follow the kernel's current header and are marked with
// the release that brought them.
package nlabi
