package nlabi

// enum rdma_nl_counter_mode (rdma_netlink.h): a port's QP counter mode.
const (
	RDMA_COUNTER_MODE_NONE   = 0
	RDMA_COUNTER_MODE_AUTO   = 1
	RDMA_COUNTER_MODE_MANUAL = 2
)

// enum rdma_nl_counter_mask (rdma_netlink.h): the criteria of auto mode.
const (
	RDMA_COUNTER_MASK_QP_TYPE = 1
	RDMA_COUNTER_MASK_PID     = 2 // Linux 5.9
)
