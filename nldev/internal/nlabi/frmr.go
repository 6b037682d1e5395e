package nlabi

// FRMR pools: the fast-registration MR pools the RDMA core keeps per device
// (include/uapi/rdma/rdma_netlink.h, Linux 7.0). Values checked by
// compiling iproute2's synced copy of the header (iproute2 ee2a4a86).

// enum rdma_nldev_command: the FRMR pool commands.
const (
	RDMA_NLDEV_CMD_FRMR_POOLS_GET = 29 // doit and dump; DEV_INDEX
	RDMA_NLDEV_CMD_FRMR_POOLS_SET = 30 // doit, RDMA_NL_ADMIN_PERM; parsed strictly
)

// enum rdma_nldev_attr: the FRMR pool attributes. The kernel writes the
// FRMR_POOLS table and its entries without NLA_F_NESTED and the KEY nest
// with it; a FRMR_POOLS_SET request must set it on the KEY nest.
const (
	RDMA_NLDEV_ATTR_FRMR_POOLS                      = 105 // nested table of FRMR_POOL_ENTRY
	RDMA_NLDEV_ATTR_FRMR_POOL_ENTRY                 = 106 // nested
	RDMA_NLDEV_ATTR_FRMR_POOL_KEY                   = 107 // nested: KEY_* below
	RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ATS               = 108 // u8
	RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ACCESS_FLAGS      = 109 // u32
	RDMA_NLDEV_ATTR_FRMR_POOL_KEY_VENDOR_KEY        = 110 // u64
	RDMA_NLDEV_ATTR_FRMR_POOL_KEY_NUM_DMA_BLOCKS    = 111 // u64
	RDMA_NLDEV_ATTR_FRMR_POOL_QUEUE_HANDLES         = 112 // u32
	RDMA_NLDEV_ATTR_FRMR_POOL_MAX_IN_USE            = 113 // u64
	RDMA_NLDEV_ATTR_FRMR_POOL_IN_USE                = 114 // u64
	RDMA_NLDEV_ATTR_FRMR_POOLS_AGING_PERIOD         = 115 // u32, seconds
	RDMA_NLDEV_ATTR_FRMR_POOL_PINNED_HANDLES        = 116 // u32
	RDMA_NLDEV_ATTR_FRMR_POOL_KEY_KERNEL_VENDOR_KEY = 117 // u64; output only (a SET carrying it gets EINVAL)
)
