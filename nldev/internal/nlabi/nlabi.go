package nlabi

// Netlink clients and groups of NETLINK_RDMA (enum in rdma_netlink.h:
// RDMA_NL_IWCM ... RDMA_NL_NUM_CLIENTS, and enum rdma_nl_mcgroups).
const (
	RDMA_NL_IWCM  = 2
	RDMA_NL_RSVD  = 3
	RDMA_NL_LS    = 4
	RDMA_NL_NLDEV = 5

	RDMA_NL_GROUP_IWPM   = 2
	RDMA_NL_GROUP_LS     = 3
	RDMA_NL_GROUP_NOTIFY = 4
)

// GetType is RDMA_NL_GET_TYPE(client, op): the nlmsg_type of a request.
func GetType(client, op uint16) uint16 { return client<<10 + op }

// GetClient is RDMA_NL_GET_CLIENT(type).
func GetClient(typ uint16) uint16 { return (typ >> 10) & 0x3f }

// GetOp is RDMA_NL_GET_OP(type).
func GetOp(typ uint16) uint16 { return typ & 0x3ff }

// enum rdma_nldev_command.
const (
	RDMA_NLDEV_CMD_UNSPEC          = 0
	RDMA_NLDEV_CMD_GET             = 1
	RDMA_NLDEV_CMD_SET             = 2
	RDMA_NLDEV_CMD_NEWLINK         = 3
	RDMA_NLDEV_CMD_DELLINK         = 4
	RDMA_NLDEV_CMD_PORT_GET        = 5
	RDMA_NLDEV_CMD_SYS_GET         = 6
	RDMA_NLDEV_CMD_SYS_SET         = 7
	RDMA_NLDEV_CMD_RES_GET         = 9
	RDMA_NLDEV_CMD_RES_QP_GET      = 10
	RDMA_NLDEV_CMD_RES_CM_ID_GET   = 11
	RDMA_NLDEV_CMD_RES_CQ_GET      = 12
	RDMA_NLDEV_CMD_RES_MR_GET      = 13
	RDMA_NLDEV_CMD_RES_PD_GET      = 14
	RDMA_NLDEV_CMD_GET_CHARDEV     = 15
	RDMA_NLDEV_CMD_STAT_SET        = 16
	RDMA_NLDEV_CMD_STAT_GET        = 17
	RDMA_NLDEV_CMD_STAT_DEL        = 18
	RDMA_NLDEV_CMD_RES_QP_GET_RAW  = 19
	RDMA_NLDEV_CMD_RES_CQ_GET_RAW  = 20
	RDMA_NLDEV_CMD_RES_MR_GET_RAW  = 21
	RDMA_NLDEV_CMD_RES_CTX_GET     = 22
	RDMA_NLDEV_CMD_RES_SRQ_GET     = 23
	RDMA_NLDEV_CMD_STAT_GET_STATUS = 24
	RDMA_NLDEV_CMD_RES_SRQ_GET_RAW = 25 // 6.7
	RDMA_NLDEV_CMD_NEWDEV          = 26 // 6.11
	RDMA_NLDEV_CMD_DELDEV          = 27 // 6.11
	RDMA_NLDEV_CMD_MONITOR         = 28 // 6.12
)

// enum rdma_nldev_attr.
const (
	RDMA_NLDEV_ATTR_UNSPEC                     = 0
	RDMA_NLDEV_ATTR_PAD                        = 0
	RDMA_NLDEV_ATTR_DEV_INDEX                  = 1   // u32
	RDMA_NLDEV_ATTR_DEV_NAME                   = 2   // string
	RDMA_NLDEV_ATTR_PORT_INDEX                 = 3   // u32; in GET replies: the number of ports
	RDMA_NLDEV_ATTR_CAP_FLAGS                  = 4   // u64
	RDMA_NLDEV_ATTR_FW_VERSION                 = 5   // string
	RDMA_NLDEV_ATTR_NODE_GUID                  = 6   // u64
	RDMA_NLDEV_ATTR_SYS_IMAGE_GUID             = 7   // u64
	RDMA_NLDEV_ATTR_SUBNET_PREFIX              = 8   // u64
	RDMA_NLDEV_ATTR_LID                        = 9   // u32
	RDMA_NLDEV_ATTR_SM_LID                     = 10  // u32
	RDMA_NLDEV_ATTR_LMC                        = 11  // u8
	RDMA_NLDEV_ATTR_PORT_STATE                 = 12  // u8
	RDMA_NLDEV_ATTR_PORT_PHYS_STATE            = 13  // u8
	RDMA_NLDEV_ATTR_DEV_NODE_TYPE              = 14  // u8
	RDMA_NLDEV_ATTR_RES_SUMMARY                = 15  // nested table
	RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY          = 16  // nested table
	RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME     = 17  // string
	RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR     = 18  // u64
	RDMA_NLDEV_ATTR_RES_QP                     = 19  // nested table
	RDMA_NLDEV_ATTR_RES_QP_ENTRY               = 20  // nested table
	RDMA_NLDEV_ATTR_RES_LQPN                   = 21  // u32
	RDMA_NLDEV_ATTR_RES_RQPN                   = 22  // u32
	RDMA_NLDEV_ATTR_RES_RQ_PSN                 = 23  // u32
	RDMA_NLDEV_ATTR_RES_SQ_PSN                 = 24  // u32
	RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE         = 25  // u8
	RDMA_NLDEV_ATTR_RES_TYPE                   = 26  // u8
	RDMA_NLDEV_ATTR_RES_STATE                  = 27  // u8
	RDMA_NLDEV_ATTR_RES_PID                    = 28  // u32
	RDMA_NLDEV_ATTR_RES_KERN_NAME              = 29  // string
	RDMA_NLDEV_ATTR_RES_CM_ID                  = 30  // nested table
	RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY            = 31  // nested table
	RDMA_NLDEV_ATTR_RES_PS                     = 32  // u32
	RDMA_NLDEV_ATTR_RES_SRC_ADDR               = 33  // struct __kernel_sockaddr_storage
	RDMA_NLDEV_ATTR_RES_DST_ADDR               = 34  // struct __kernel_sockaddr_storage
	RDMA_NLDEV_ATTR_RES_CQ                     = 35  // nested table
	RDMA_NLDEV_ATTR_RES_CQ_ENTRY               = 36  // nested table
	RDMA_NLDEV_ATTR_RES_CQE                    = 37  // u32
	RDMA_NLDEV_ATTR_RES_USECNT                 = 38  // u64
	RDMA_NLDEV_ATTR_RES_POLL_CTX               = 39  // u8
	RDMA_NLDEV_ATTR_RES_MR                     = 40  // nested table
	RDMA_NLDEV_ATTR_RES_MR_ENTRY               = 41  // nested table
	RDMA_NLDEV_ATTR_RES_RKEY                   = 42  // u32
	RDMA_NLDEV_ATTR_RES_LKEY                   = 43  // u32
	RDMA_NLDEV_ATTR_RES_IOVA                   = 44  // u64
	RDMA_NLDEV_ATTR_RES_MRLEN                  = 45  // u64
	RDMA_NLDEV_ATTR_RES_PD                     = 46  // nested table
	RDMA_NLDEV_ATTR_RES_PD_ENTRY               = 47  // nested table
	RDMA_NLDEV_ATTR_RES_LOCAL_DMA_LKEY         = 48  // u32
	RDMA_NLDEV_ATTR_RES_UNSAFE_GLOBAL_RKEY     = 49  // u32
	RDMA_NLDEV_ATTR_NDEV_INDEX                 = 50  // u32
	RDMA_NLDEV_ATTR_NDEV_NAME                  = 51  // string
	RDMA_NLDEV_ATTR_DRIVER                     = 52  // nested table
	RDMA_NLDEV_ATTR_DRIVER_ENTRY               = 53  // nested table
	RDMA_NLDEV_ATTR_DRIVER_STRING              = 54  // string
	RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE          = 55  // u8
	RDMA_NLDEV_ATTR_DRIVER_S32                 = 56  // s32
	RDMA_NLDEV_ATTR_DRIVER_U32                 = 57  // u32
	RDMA_NLDEV_ATTR_DRIVER_S64                 = 58  // s64
	RDMA_NLDEV_ATTR_DRIVER_U64                 = 59  // u64
	RDMA_NLDEV_ATTR_RES_PDN                    = 60  // u32
	RDMA_NLDEV_ATTR_RES_CQN                    = 61  // u32
	RDMA_NLDEV_ATTR_RES_MRN                    = 62  // u32
	RDMA_NLDEV_ATTR_RES_CM_IDN                 = 63  // u32
	RDMA_NLDEV_ATTR_RES_CTXN                   = 64  // u32
	RDMA_NLDEV_ATTR_LINK_TYPE                  = 65  // string
	RDMA_NLDEV_SYS_ATTR_NETNS_MODE             = 66  // u8
	RDMA_NLDEV_ATTR_DEV_PROTOCOL               = 67  // string
	RDMA_NLDEV_NET_NS_FD                       = 68  // u32
	RDMA_NLDEV_ATTR_CHARDEV_TYPE               = 69  // string
	RDMA_NLDEV_ATTR_CHARDEV_NAME               = 70  // string
	RDMA_NLDEV_ATTR_CHARDEV_ABI                = 71  // u64
	RDMA_NLDEV_ATTR_CHARDEV                    = 72  // u64
	RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID           = 73  // u32 on the wire (the header's comment says u64)
	RDMA_NLDEV_ATTR_STAT_MODE                  = 74  // u32
	RDMA_NLDEV_ATTR_STAT_RES                   = 75  // u32
	RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK        = 76  // u32
	RDMA_NLDEV_ATTR_STAT_COUNTER               = 77  // nested table
	RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY         = 78  // nested table
	RDMA_NLDEV_ATTR_STAT_COUNTER_ID            = 79  // u32
	RDMA_NLDEV_ATTR_STAT_HWCOUNTERS            = 80  // nested table
	RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY       = 81  // nested table
	RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME  = 82  // string
	RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE = 83  // u64
	RDMA_NLDEV_ATTR_DEV_DIM                    = 84  // u8
	RDMA_NLDEV_ATTR_RES_RAW                    = 85  // binary
	RDMA_NLDEV_ATTR_RES_CTX                    = 86  // nested table
	RDMA_NLDEV_ATTR_RES_CTX_ENTRY              = 87  // nested table
	RDMA_NLDEV_ATTR_RES_SRQ                    = 88  // nested table
	RDMA_NLDEV_ATTR_RES_SRQ_ENTRY              = 89  // nested table
	RDMA_NLDEV_ATTR_RES_SRQN                   = 90  // u32
	RDMA_NLDEV_ATTR_MIN_RANGE                  = 91  // u32
	RDMA_NLDEV_ATTR_MAX_RANGE                  = 92  // u32
	RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK           = 93  // u8
	RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX       = 94  // u32
	RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC     = 95  // u8
	RDMA_NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE   = 96  // u8; 6.7
	RDMA_NLDEV_ATTR_DRIVER_DETAILS             = 97  // u8; 6.10
	RDMA_NLDEV_ATTR_RES_SUBTYPE                = 98  // string; 6.10
	RDMA_NLDEV_ATTR_DEV_TYPE                   = 99  // u8; 6.11
	RDMA_NLDEV_ATTR_PARENT_NAME                = 100 // string; 6.11
	RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE           = 101 // u8; 6.11
	RDMA_NLDEV_ATTR_EVENT_TYPE                 = 102 // u8; 6.12
	RDMA_NLDEV_SYS_ATTR_MONITOR_MODE           = 103 // u8; 6.12
	RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED     = 104 // u8; 6.15
)

// Size limits the kernel's nldev_policy applies to strings, without the
// terminating NUL (IB_DEVICE_NAME_MAX - 1, IFNAMSIZ - 1).
const (
	IB_DEVICE_NAME_MAX = 64
	IFNAMSIZ           = 16
)
