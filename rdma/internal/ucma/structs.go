package ucma

// CmdHdr is struct rdma_ucm_cmd_hdr: the header of every command.
type CmdHdr struct {
	Cmd uint32
	In  uint16 // the command struct's size
	Out uint16 // the response buffer's size
}

// SockaddrStorage is struct __kernel_sockaddr_storage (128 bytes), used
// by BIND, RESOLVE_ADDR and QUERY; the size next to it says how much is
// an address.
type SockaddrStorage [128]byte

// CreateID is struct rdma_ucm_create_id.
type CreateID struct {
	UID      uint64
	Response uint64
	PS       uint16
	QPType   uint8
	Reserved [5]uint8
}

// CreateIDResp is struct rdma_ucm_create_id_resp.
type CreateIDResp struct {
	ID uint32
}

// DestroyID is struct rdma_ucm_destroy_id (LEAVE_MCAST uses the same).
type DestroyID struct {
	Response uint64
	ID       uint32
	Reserved uint32
}

// DestroyIDResp is struct rdma_ucm_destroy_id_resp.
type DestroyIDResp struct {
	EventsReported uint32
}

// Bind is struct rdma_ucm_bind.
type Bind struct {
	ID       uint32
	AddrSize uint16
	Reserved uint16
	Addr     SockaddrStorage
}

// ResolveAddr is struct rdma_ucm_resolve_addr.
type ResolveAddr struct {
	ID        uint32
	TimeoutMs uint32
	SrcSize   uint16
	DstSize   uint16
	Reserved  uint32
	SrcAddr   SockaddrStorage
	DstAddr   SockaddrStorage
}

// ResolveRoute is struct rdma_ucm_resolve_route.
type ResolveRoute struct {
	ID        uint32
	TimeoutMs uint32
}

// Query is struct rdma_ucm_query.
type Query struct {
	Response uint64
	ID       uint32
	Option   uint32
}

// QueryAddrResp is struct rdma_ucm_query_addr_resp (QUERY ADDR and GID).
type QueryAddrResp struct {
	NodeGUID   [8]byte // raw, big-endian
	PortNum    uint8
	Reserved   uint8
	PKey       [2]byte // big-endian
	SrcSize    uint16
	DstSize    uint16
	SrcAddr    SockaddrStorage
	DstAddr    SockaddrStorage
	IBDevIndex uint32 // ~5.8+; pre-fill with NoDevIndex
	Reserved1  uint32
}

// NoDevIndex pre-fills QueryAddrResp.IBDevIndex: a kernel that does not
// know the field leaves it so.
const NoDevIndex = 0xFFFFFFFF

// QueryPathResp is struct rdma_ucm_query_path_resp, followed by
// NumPaths records of struct ib_path_rec_data.
type QueryPathResp struct {
	NumPaths uint32
	Reserved uint32
}

// PathRecData is struct ib_path_rec_data: flags and an SA PathRecord in
// wire (big-endian) format.
type PathRecData struct {
	Flags    uint32
	Reserved uint32
	PathRec  SAPathRecord
}

// SAPathRecord is an SA PathRecord attribute in wire format (InfiniBand
// Architecture Specification vol. 1, 15.2.5.16; rdma-core's
// infiniband/sa.h struct ibv_path_record): big-endian, with sub-byte
// fields packed as the comments say. ib_path_rec_data carries it as
// __u32 path_rec[16].
type SAPathRecord struct {
	ServiceID         [8]byte
	DGID              [16]byte
	SGID              [16]byte
	DLID              [2]byte
	SLID              [2]byte
	FlowLabelHopLimit [4]byte // raw traffic:1, reserved:3, flow label:20, hop limit:8
	TClass            uint8
	ReversibleNumPath uint8 // reversible:1, numb path:7
	PKey              [2]byte
	QoSClassSL        [2]byte // QoS class:12, SL:4
	MTU               uint8   // selector:2, MTU:6
	Rate              uint8   // selector:2, rate:6
	PacketLifeTime    uint8   // selector:2, packet lifetime:6
	Preference        uint8
	Reserved          [6]byte
}

// Flags of struct ib_path_rec_data (enum in <rdma/ib_user_sa.h>).
const (
	IB_PATH_GMP             = 1 << 0
	IB_PATH_PRIMARY         = 1 << 1
	IB_PATH_ALTERNATE       = 1 << 2
	IB_PATH_OUTBOUND        = 1 << 3
	IB_PATH_INBOUND         = 1 << 4
	IB_PATH_INBOUND_REVERSE = 1 << 5
)

// QueryPathMax is how many records a QUERY PATH response has room for
// (librdmacm's ucma_query_path asks for six). The kernel only copies a
// record while more than one record's size remains, so the buffer has
// one spare record's room.
const QueryPathMax = 6

// ConnParam is struct rdma_ucm_conn_param.
type ConnParam struct {
	QPNum              uint32
	QKey               uint32
	PrivateData        [MaxPrivateData]byte
	PrivateDataLen     uint8
	SRQ                uint8
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	Valid              uint8
}

// AhAttr is struct ib_uverbs_ah_attr (with its struct ib_uverbs_global_route).
type AhAttr struct {
	DGID         [16]byte
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	Reserved     uint8
	DLID         uint16
	SL           uint8
	SrcPathBits  uint8
	StaticRate   uint8
	IsGlobal     uint8
	PortNum      uint8
	Reserved2    uint8
}

// UDParam is struct rdma_ucm_ud_param.
type UDParam struct {
	QPNum          uint32
	QKey           uint32
	AhAttr         AhAttr
	PrivateData    [MaxPrivateData]byte
	PrivateDataLen uint8
	Reserved       [7]uint8
}

// ECE is struct rdma_ucm_ece (enhanced connection establishment).
type ECE struct {
	VendorID uint32
	AttrMod  uint32
}

// Connect is struct rdma_ucm_connect.
type Connect struct {
	ConnParam ConnParam
	ID        uint32
	Reserved  uint32
	ECE       ECE
}

// Listen is struct rdma_ucm_listen.
type Listen struct {
	ID      uint32
	Backlog uint32
}

// Accept is struct rdma_ucm_accept.
type Accept struct {
	UID       uint64
	ConnParam ConnParam
	ID        uint32
	Reserved  uint32
	ECE       ECE
}

// Reject is struct rdma_ucm_reject.
type Reject struct {
	ID             uint32
	PrivateDataLen uint8
	Reason         uint8 // 0: the kernel sends IB_CM_REJ_CONSUMER_DEFINED (~5.8+; reserved before)
	Reserved       [2]uint8
	PrivateData    [MaxPrivateData]byte
}

// Disconnect is struct rdma_ucm_disconnect.
type Disconnect struct {
	ID uint32
}

// InitQPAttr is struct rdma_ucm_init_qp_attr.
type InitQPAttr struct {
	Response uint64
	ID       uint32
	QPState  uint32
}

// QPAttr is struct ib_uverbs_qp_attr (rdma/ib_user_verbs.h), INIT_QP_ATTR's
// response.
type QPAttr struct {
	QPAttrMask       uint32
	QPState          uint32
	CurQPState       uint32
	PathMTU          uint32
	PathMigState     uint32
	QKey             uint32
	RQPSN            uint32
	SQPSN            uint32
	DestQPNum        uint32
	QPAccessFlags    uint32
	AhAttr           AhAttr
	AltAhAttr        AhAttr
	MaxSendWR        uint32
	MaxRecvWR        uint32
	MaxSendSGE       uint32
	MaxRecvSGE       uint32
	MaxInlineData    uint32
	PKeyIndex        uint16
	AltPKeyIndex     uint16
	EnSQDAsyncNotify uint8
	SQDraining       uint8
	MaxRdAtomic      uint8
	MaxDestRdAtomic  uint8
	MinRNRTimer      uint8
	PortNum          uint8
	Timeout          uint8
	RetryCnt         uint8
	RNRRetry         uint8
	AltPortNum       uint8
	AltTimeout       uint8
	Reserved         [5]uint8
}

// Notify is struct rdma_ucm_notify.
type Notify struct {
	ID    uint32
	Event uint32
}

// MigrateID is struct rdma_ucm_migrate_id, written to the new channel.
type MigrateID struct {
	Response uint64
	ID       uint32
	FD       uint32 // the old channel's fd
}

// MigrateResp is struct rdma_ucm_migrate_resp.
type MigrateResp struct {
	EventsReported uint32
}

// GetEvent is struct rdma_ucm_get_event.
type GetEvent struct {
	Response uint64
}

// EventResp is struct rdma_ucm_event_resp. Param is the union of
// ConnParam and UDParam (only 4-aligned here; decode it with ConnParamOf
// and UDParamOf).
type EventResp struct {
	UID      uint64
	ID       uint32
	Event    uint32
	Status   uint32 // an int in practice: a negative errno, or a reason
	Param    [304]byte
	Reserved uint32
	ECE      ECE
}

// MinEventResp is the smallest response buffer 6.x accepts for
// GET_EVENT (the struct before ECE was added).
const MinEventResp = 324

// SetOption is struct rdma_ucm_set_option; OptVal points at OptLen bytes.
type SetOption struct {
	OptVal  uint64
	ID      uint32
	Level   uint32
	OptName uint32
	OptLen  uint32
}

// JoinMcast is struct rdma_ucm_join_mcast.
type JoinMcast struct {
	Response  uint64
	UID       uint64
	ID        uint32
	AddrSize  uint16
	JoinFlags uint16
	Addr      SockaddrStorage
}

// CreateIDResp, DestroyIDResp and MigrateResp serve JOIN_MCAST (the mc
// id) and LEAVE_MCAST (its events_reported) too: LEAVE_MCAST takes a
// DestroyID whose ID is the mc id.
