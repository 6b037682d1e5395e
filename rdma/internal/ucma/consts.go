package ucma

// ABI versions the package speaks (RDMA_USER_CM_ABI_VERSION is 4;
// librdmacm accepts 3 and 4).
const (
	ABIVersion    = 4
	MinABIVersion = 3
)

// Commands (the anonymous enum of RDMA_USER_CM_CMD_* in rdma_user_cm.h).
const (
	RDMA_USER_CM_CMD_CREATE_ID     = 0
	RDMA_USER_CM_CMD_DESTROY_ID    = 1
	RDMA_USER_CM_CMD_BIND_IP       = 2
	RDMA_USER_CM_CMD_RESOLVE_IP    = 3
	RDMA_USER_CM_CMD_RESOLVE_ROUTE = 4
	RDMA_USER_CM_CMD_QUERY_ROUTE   = 5
	RDMA_USER_CM_CMD_CONNECT       = 6
	RDMA_USER_CM_CMD_LISTEN        = 7
	RDMA_USER_CM_CMD_ACCEPT        = 8
	RDMA_USER_CM_CMD_REJECT        = 9
	RDMA_USER_CM_CMD_DISCONNECT    = 10
	RDMA_USER_CM_CMD_INIT_QP_ATTR  = 11
	RDMA_USER_CM_CMD_GET_EVENT     = 12
	RDMA_USER_CM_CMD_GET_OPTION    = 13
	RDMA_USER_CM_CMD_SET_OPTION    = 14
	RDMA_USER_CM_CMD_NOTIFY        = 15
	RDMA_USER_CM_CMD_JOIN_IP_MCAST = 16
	RDMA_USER_CM_CMD_LEAVE_MCAST   = 17
	RDMA_USER_CM_CMD_MIGRATE_ID    = 18
	RDMA_USER_CM_CMD_QUERY         = 19
	RDMA_USER_CM_CMD_BIND          = 20
	RDMA_USER_CM_CMD_RESOLVE_ADDR  = 21
	RDMA_USER_CM_CMD_JOIN_MCAST    = 22
)

// Port spaces (enum rdma_ucm_port_space in rdma_user_cm.h); RDMA netlink
// reports a cm_id's with the same values.
const (
	RDMA_PS_IPOIB = 0x0002
	RDMA_PS_IB    = 0x013F
	RDMA_PS_TCP   = 0x0106
	RDMA_PS_UDP   = 0x0111
)

// QUERY options (RDMA_USER_CM_QUERY_*).
const (
	RDMA_USER_CM_QUERY_ADDR = 0
	RDMA_USER_CM_QUERY_PATH = 1
	RDMA_USER_CM_QUERY_GID  = 2
)

// Event types (enum rdma_cm_event_type in rdma-core's rdma_cma.h; the
// kernel's include/rdma/rdma_cm.h has the same values).
const (
	RDMA_CM_EVENT_ADDR_RESOLVED    = 0
	RDMA_CM_EVENT_ADDR_ERROR       = 1
	RDMA_CM_EVENT_ROUTE_RESOLVED   = 2
	RDMA_CM_EVENT_ROUTE_ERROR      = 3
	RDMA_CM_EVENT_CONNECT_REQUEST  = 4
	RDMA_CM_EVENT_CONNECT_RESPONSE = 5
	RDMA_CM_EVENT_CONNECT_ERROR    = 6
	RDMA_CM_EVENT_UNREACHABLE      = 7
	RDMA_CM_EVENT_REJECTED         = 8
	RDMA_CM_EVENT_ESTABLISHED      = 9
	RDMA_CM_EVENT_DISCONNECTED     = 10
	RDMA_CM_EVENT_DEVICE_REMOVAL   = 11
	RDMA_CM_EVENT_MULTICAST_JOIN   = 12
	RDMA_CM_EVENT_MULTICAST_ERROR  = 13
	RDMA_CM_EVENT_ADDR_CHANGE      = 14
	RDMA_CM_EVENT_TIMEWAIT_EXIT    = 15
)

// Sizes of the private data a connection can carry (the kernel's
// include/rdma/ib_cm.h IB_CM_*_PRIVATE_DATA_SIZE, less the 36-byte
// IP-addressing CM header for REQ and SIDR REQ).
const (
	MaxPrivateData = 256 // RDMA_MAX_PRIVATE_DATA: the slot in every struct

	ConnectPrivateDataTCP = 92 - 36  // IB_CM_REQ_PRIVATE_DATA_SIZE less the cma header
	ConnectPrivateDataUDP = 216 - 36 // IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE less the cma header
	AcceptPrivateDataTCP  = 196      // IB_CM_REP_PRIVATE_DATA_SIZE
	AcceptPrivateDataUDP  = 136      // IB_CM_SIDR_REP_PRIVATE_DATA_SIZE
	RejectPrivateData     = 148      // IB_CM_REJ_PRIVATE_DATA_SIZE
)

// Socket address families and sizes the new-style commands require.
const (
	AF_INET  = 2
	AF_INET6 = 10
	AF_IB    = 27

	SizeofSockaddrIn  = 16
	SizeofSockaddrIn6 = 28
	SizeofSockaddrIB  = 48
)

// IB_QP_* modify masks INIT_QP_ATTR returns (enum ib_qp_attr_mask); the
// bits librdmacm clears before ibv_modify_qp on InfiniBand link layers
// are IB_QP_RATE_LIMIT and above (21..24), which verbs does not take.
const QPAttrVerbsMask = 1<<21 - 1

// RDMA_UDP_QKEY is the qkey the kernel gives UD ids of PS_UDP and PS_IB.
const RDMA_UDP_QKEY = 0x01234567

// SET_OPTION levels and names (RDMA_OPTION_* in rdma_user_cm.h).
const (
	RDMA_OPTION_ID             = 0
	RDMA_OPTION_ID_TOS         = 0 // u8
	RDMA_OPTION_ID_REUSEADDR   = 1 // int
	RDMA_OPTION_ID_AFONLY      = 2 // int
	RDMA_OPTION_ID_ACK_TIMEOUT = 3 // u8
	RDMA_OPTION_IB             = 1
	RDMA_OPTION_IB_PATH        = 1
)

// JOIN_MCAST join flags (enum rdma_ucm_join_mcast_flags).
const (
	RDMA_MC_JOIN_FLAG_FULLMEMBER          = 0
	RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER = 1
)

// IB_EVENT_COMM_EST is the NOTIFY event that forces a passive
// id's ESTABLISHED (enum ib_event_type IB_EVENT_COMM_EST).
const IB_EVENT_COMM_EST = 4
