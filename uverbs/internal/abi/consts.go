package abi

// IB_USER_VERBS_ABI_VERSION (rdma/ib_user_verbs.h): the class-wide uverbs
// ABI the write() interface speaks.
const IB_USER_VERBS_ABI_VERSION = 6

// Write commands (enum ib_uverbs_write_cmds, rdma/ib_user_verbs.h).
const (
	IB_USER_VERBS_CMD_GET_CONTEXT         = 0
	IB_USER_VERBS_CMD_QUERY_DEVICE        = 1
	IB_USER_VERBS_CMD_QUERY_PORT          = 2
	IB_USER_VERBS_CMD_ALLOC_PD            = 3
	IB_USER_VERBS_CMD_DEALLOC_PD          = 4
	IB_USER_VERBS_CMD_CREATE_AH           = 5
	IB_USER_VERBS_CMD_MODIFY_AH           = 6
	IB_USER_VERBS_CMD_QUERY_AH            = 7
	IB_USER_VERBS_CMD_DESTROY_AH          = 8
	IB_USER_VERBS_CMD_REG_MR              = 9
	IB_USER_VERBS_CMD_DEREG_MR            = 13
	IB_USER_VERBS_CMD_ALLOC_MW            = 14
	IB_USER_VERBS_CMD_DEALLOC_MW          = 16
	IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL = 17
	IB_USER_VERBS_CMD_CREATE_CQ           = 18
	IB_USER_VERBS_CMD_DESTROY_CQ          = 20
	IB_USER_VERBS_CMD_CREATE_QP           = 24
	IB_USER_VERBS_CMD_QUERY_QP            = 25
	IB_USER_VERBS_CMD_MODIFY_QP           = 26
	IB_USER_VERBS_CMD_DESTROY_QP          = 27
	IB_USER_VERBS_CMD_ATTACH_MCAST        = 30
	IB_USER_VERBS_CMD_DETACH_MCAST        = 31
	IB_USER_VERBS_CMD_CREATE_SRQ          = 32
	IB_USER_VERBS_CMD_MODIFY_SRQ          = 33
	IB_USER_VERBS_CMD_QUERY_SRQ           = 34
	IB_USER_VERBS_CMD_DESTROY_SRQ         = 35
)

// Extended write commands (the anonymous enum after ib_uverbs_write_cmds);
// they are sent with IB_USER_VERBS_CMD_FLAG_EXTENDED set.
const (
	IB_USER_VERBS_EX_CMD_QUERY_DEVICE = IB_USER_VERBS_CMD_QUERY_DEVICE
)

// Command word bits (rdma/ib_user_verbs.h).
const (
	IB_USER_VERBS_CMD_COMMAND_MASK  = 0xff
	IB_USER_VERBS_CMD_FLAG_EXTENDED = 0x80000000
)

// RDMA_IOCTL_MAGIC and RDMA_VERBS_IOCTL (rdma/rdma_user_ioctl_cmds.h):
// _IOWR(0x1b, 1, struct ib_uverbs_ioctl_hdr).
const (
	RDMA_IOCTL_MAGIC = 0x1b
	RDMA_VERBS_IOCTL = 0xC0181B01
)

// Attribute flags (anonymous enum in rdma/rdma_user_ioctl_cmds.h).
const (
	UVERBS_ATTR_F_MANDATORY    = 1 << 0
	UVERBS_ATTR_F_VALID_OUTPUT = 1 << 1
)

// Objects (enum uverbs_default_objects, rdma/ib_user_ioctl_cmds.h).
const (
	UVERBS_OBJECT_DEVICE       = 0
	UVERBS_OBJECT_PD           = 1
	UVERBS_OBJECT_COMP_CHANNEL = 2
	UVERBS_OBJECT_CQ           = 3
	UVERBS_OBJECT_QP           = 4
	UVERBS_OBJECT_SRQ          = 5
	UVERBS_OBJECT_AH           = 6
	UVERBS_OBJECT_MR           = 7
	UVERBS_OBJECT_ASYNC_EVENT  = 16
)

// Driver-namespace attributes (rdma/ib_user_ioctl_cmds.h).
const (
	UVERBS_ATTR_UHW_IN  = 0x1000
	UVERBS_ATTR_UHW_OUT = 0x1001
)

// Methods of UVERBS_OBJECT_DEVICE (enum uverbs_methods_device).
const (
	UVERBS_METHOD_INVOKE_WRITE    = 0
	UVERBS_METHOD_INFO_HANDLES    = 1
	UVERBS_METHOD_QUERY_PORT      = 2
	UVERBS_METHOD_GET_CONTEXT     = 3
	UVERBS_METHOD_QUERY_CONTEXT   = 4
	UVERBS_METHOD_QUERY_GID_TABLE = 5
	UVERBS_METHOD_QUERY_GID_ENTRY = 6
)

// Attributes of UVERBS_METHOD_INVOKE_WRITE
// (enum uverbs_attrs_invoke_write_cmd_attr_ids).
const (
	UVERBS_ATTR_CORE_IN   = 0
	UVERBS_ATTR_CORE_OUT  = 1
	UVERBS_ATTR_WRITE_CMD = 2
)

// Attributes of UVERBS_METHOD_QUERY_PORT
// (enum uverbs_attrs_query_port_cmd_attr_ids).
const (
	UVERBS_ATTR_QUERY_PORT_PORT_NUM = 0
	UVERBS_ATTR_QUERY_PORT_RESP     = 1
)

// Attributes of UVERBS_METHOD_GET_CONTEXT and UVERBS_METHOD_QUERY_CONTEXT
// (enum uverbs_attrs_get_context_attr_ids, _query_context_attr_ids).
const (
	UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS   = 0
	UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT       = 1
	UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS = 0
	UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT     = 1
)

// Attributes of UVERBS_METHOD_QUERY_GID_TABLE
// (enum uverbs_attrs_query_gid_table_cmd_attr_ids).
const (
	UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE       = 0
	UVERBS_ATTR_QUERY_GID_TABLE_FLAGS            = 1
	UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES     = 2
	UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES = 3
)

// Attributes of UVERBS_METHOD_QUERY_GID_ENTRY
// (enum uverbs_attrs_query_gid_entry_cmd_attr_ids).
const (
	UVERBS_ATTR_QUERY_GID_ENTRY_PORT       = 0
	UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX  = 1
	UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS      = 2
	UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY = 3
)

// UVERBS_METHOD_ASYNC_EVENT_ALLOC (enum uverbs_method_async_event) and its
// attribute (enum uverbs_attrs_async_event_create).
const (
	UVERBS_METHOD_ASYNC_EVENT_ALLOC         = 0
	UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE = 0
)

// Core support bits of GET_CONTEXT (enum ib_uverbs_core_support,
// rdma/ib_user_ioctl_verbs.h).
const (
	IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS = 1 << 0
)

// GID types (enum ib_uverbs_gid_type, rdma/ib_user_ioctl_verbs.h).
const (
	IB_UVERBS_GID_TYPE_IB      = 0
	IB_UVERBS_GID_TYPE_ROCE_V1 = 1
	IB_UVERBS_GID_TYPE_ROCE_V2 = 2
)

// QP types (enum ib_uverbs_qp_type, rdma/ib_user_ioctl_verbs.h).
const (
	IB_UVERBS_QPT_RC = 2
	IB_UVERBS_QPT_UC = 3
	IB_UVERBS_QPT_UD = 4
)
