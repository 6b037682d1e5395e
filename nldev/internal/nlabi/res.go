package nlabi

// enum rdma_nldev_print_type (rdma_netlink.h): how a driver attribute
// (RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE) wants its value printed.
const (
	RDMA_NLDEV_PRINT_TYPE_UNSPEC = 0
	RDMA_NLDEV_PRINT_TYPE_HEX    = 1
)

// enum rdma_ucm_port_space (rdma_user_cm.h): the port space of a cm_id
// (RDMA_NLDEV_ATTR_RES_PS).
const (
	RDMA_PS_IPOIB = 0x0002
	RDMA_PS_IB    = 0x013F
	RDMA_PS_TCP   = 0x0106
	RDMA_PS_UDP   = 0x0111
)

// Layout of struct __kernel_sockaddr_storage as RDMA_NLDEV_ATTR_RES_SRC_ADDR
// and RDMA_NLDEV_ATTR_RES_DST_ADDR carry it (linux/socket.h, linux/in.h,
// linux/in6.h): the family in host order, then sockaddr_in or sockaddr_in6.
const (
	SockaddrStorageSize = 128
	SockaddrPortOffset  = 2  // sin_port / sin6_port, big-endian
	SockaddrIn4Offset   = 4  // sin_addr
	SockaddrIn6Offset   = 8  // sin6_addr
	SockaddrScopeOffset = 24 // sin6_scope_id, host order
	AF_INET             = 2
	AF_INET6            = 10
)
