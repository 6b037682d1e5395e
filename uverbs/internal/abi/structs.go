package abi

// IoctlHdr is struct ib_uverbs_ioctl_hdr (rdma/rdma_user_ioctl_cmds.h),
// the 24-byte header of RDMA_VERBS_IOCTL; the attributes follow it.
type IoctlHdr struct {
	Length    uint16
	ObjectID  uint16
	MethodID  uint16
	NumAttrs  uint16
	Reserved1 uint64
	DriverID  uint32
	Reserved2 uint32
}

// Attr is struct ib_uverbs_attr (rdma/rdma_user_ioctl_cmds.h). AttrData
// is the attr_data union: for enum attributes its low byte is elem_id.
type Attr struct {
	AttrID   uint16
	Len      uint16
	Flags    uint16
	AttrData uint16
	Data     uint64
}

// CmdHdr is struct ib_uverbs_cmd_hdr (rdma/ib_user_verbs.h), the header of
// every write() command.
type CmdHdr struct {
	Command  uint32
	InWords  uint16
	OutWords uint16
}

// ExCmdHdr is struct ib_uverbs_ex_cmd_hdr (rdma/ib_user_verbs.h), the
// second header of extended write() commands.
type ExCmdHdr struct {
	Response         uint64
	ProviderInWords  uint16
	ProviderOutWords uint16
	CmdHdrReserved   uint32
}

// GetContext is struct ib_uverbs_get_context (rdma/ib_user_verbs.h).
type GetContext struct {
	Response uint64
}

// GetContextResp is struct ib_uverbs_get_context_resp (rdma/ib_user_verbs.h).
type GetContextResp struct {
	AsyncFD        uint32
	NumCompVectors uint32
}

// QueryDevice is struct ib_uverbs_query_device (rdma/ib_user_verbs.h).
type QueryDevice struct {
	Response uint64
}

// QueryDeviceResp is struct ib_uverbs_query_device_resp
// (rdma/ib_user_verbs.h). NodeGUID and SysImageGUID are __be64.
type QueryDeviceResp struct {
	FwVer                 uint64
	NodeGUID              [8]byte
	SysImageGUID          [8]byte
	MaxMrSize             uint64
	PageSizeCap           uint64
	VendorID              uint32
	VendorPartID          uint32
	HwVer                 uint32
	MaxQp                 uint32
	MaxQpWr               uint32
	DeviceCapFlags        uint32
	MaxSge                uint32
	MaxSgeRd              uint32
	MaxCq                 uint32
	MaxCqe                uint32
	MaxMr                 uint32
	MaxPd                 uint32
	MaxQpRdAtom           uint32
	MaxEeRdAtom           uint32
	MaxResRdAtom          uint32
	MaxQpInitRdAtom       uint32
	MaxEeInitRdAtom       uint32
	AtomicCap             uint32
	MaxEe                 uint32
	MaxRdd                uint32
	MaxMw                 uint32
	MaxRawIPv6Qp          uint32
	MaxRawEthyQp          uint32
	MaxMcastGrp           uint32
	MaxMcastQpAttach      uint32
	MaxTotalMcastQpAttach uint32
	MaxAh                 uint32
	MaxFmr                uint32
	MaxMapPerFmr          uint32
	MaxSrq                uint32
	MaxSrqWr              uint32
	MaxSrqSge             uint32
	MaxPkeys              uint16
	LocalCaAckDelay       uint8
	PhysPortCnt           uint8
	Reserved              [4]uint8
}

// ExQueryDevice is struct ib_uverbs_ex_query_device (rdma/ib_user_verbs.h).
type ExQueryDevice struct {
	CompMask uint32
	Reserved uint32
}

// OdpCaps is struct ib_uverbs_odp_caps (rdma/ib_user_verbs.h).
type OdpCaps struct {
	GeneralCaps uint64
	RcOdpCaps   uint32
	UcOdpCaps   uint32
	UdOdpCaps   uint32
	Reserved    uint32
}

// RssCaps is struct ib_uverbs_rss_caps (rdma/ib_user_verbs.h).
type RssCaps struct {
	SupportedQpts              uint32
	MaxRwqIndirectionTables    uint32
	MaxRwqIndirectionTableSize uint32
	Reserved                   uint32
}

// TmCaps is struct ib_uverbs_tm_caps (rdma/ib_user_verbs.h).
type TmCaps struct {
	MaxRndvHdrSize uint32
	MaxNumTags     uint32
	Flags          uint32
	MaxOps         uint32
	MaxSge         uint32
	Reserved       uint32
}

// CqModerationCaps is struct ib_uverbs_cq_moderation_caps
// (rdma/ib_user_verbs.h).
type CqModerationCaps struct {
	MaxCqModerationCount  uint16
	MaxCqModerationPeriod uint16
	Reserved              uint32
}

// ExQueryDeviceResp is struct ib_uverbs_ex_query_device_resp
// (rdma/ib_user_verbs.h). ResponseLength says how much of it the kernel
// filled.
type ExQueryDeviceResp struct {
	Base             QueryDeviceResp
	CompMask         uint32
	ResponseLength   uint32
	OdpCaps          OdpCaps
	TimestampMask    uint64
	HcaCoreClock     uint64
	DeviceCapFlagsEx uint64
	RssCaps          RssCaps
	MaxWqTypeRq      uint32
	RawPacketCaps    uint32
	TmCaps           TmCaps
	CqModerationCaps CqModerationCaps
	MaxDmSize        uint64
	XrcOdpCaps       uint32
	Reserved         uint32
}

// QueryPort is struct ib_uverbs_query_port (rdma/ib_user_verbs.h).
type QueryPort struct {
	Response uint64
	PortNum  uint8
	Reserved [7]uint8
}

// QueryPortResp is struct ib_uverbs_query_port_resp (rdma/ib_user_verbs.h).
type QueryPortResp struct {
	PortCapFlags  uint32
	MaxMsgSz      uint32
	BadPkeyCntr   uint32
	QkeyViolCntr  uint32
	GidTblLen     uint32
	PkeyTblLen    uint16
	Lid           uint16
	SmLid         uint16
	State         uint8
	MaxMtu        uint8
	ActiveMtu     uint8
	Lmc           uint8
	MaxVlNum      uint8
	SmSl          uint8
	SubnetTimeout uint8
	InitTypeReply uint8
	ActiveWidth   uint8
	ActiveSpeed   uint8
	PhysState     uint8
	LinkLayer     uint8
	Flags         uint8
	Reserved      uint8
}

// QueryPortRespEx is struct ib_uverbs_query_port_resp_ex
// (rdma/ib_user_ioctl_verbs.h). Linux 6.1's header ends it in
// reserved[6]; newer kernels (6.6+) put active_speed_ex (u32) at offset 44.
type QueryPortRespEx struct {
	LegacyResp    QueryPortResp
	PortCapFlags2 uint16
	Reserved      [2]uint8
	ActiveSpeedEx uint32
}

// GidEntry is struct ib_uverbs_gid_entry (rdma/ib_user_ioctl_verbs.h). The
// GID is raw network-order bytes.
type GidEntry struct {
	Gid           [16]byte
	GidIndex      uint32
	PortNum       uint32
	GidType       uint32
	NetdevIfindex uint32
}

// AllocPd is struct ib_uverbs_alloc_pd (rdma/ib_user_verbs.h).
type AllocPd struct {
	Response uint64
}

// AllocPdResp is struct ib_uverbs_alloc_pd_resp (rdma/ib_user_verbs.h).
type AllocPdResp struct {
	PdHandle uint32
}

// DeallocPd is struct ib_uverbs_dealloc_pd (rdma/ib_user_verbs.h).
type DeallocPd struct {
	PdHandle uint32
}

// AllocMw is struct ib_uverbs_alloc_mw (rdma/ib_user_verbs.h).
type AllocMw struct {
	Response uint64
	PdHandle uint32
	MwType   uint8 // enum ib_uverbs_mw_type: IB_UVERBS_MW_TYPE_1 or _2
	Reserved [3]uint8
}

// AllocMwResp is struct ib_uverbs_alloc_mw_resp (rdma/ib_user_verbs.h).
type AllocMwResp struct {
	MwHandle uint32
	Rkey     uint32
}

// DeallocMw is struct ib_uverbs_dealloc_mw (rdma/ib_user_verbs.h).
type DeallocMw struct {
	MwHandle uint32
}

// RegMr is struct ib_uverbs_reg_mr (rdma/ib_user_verbs.h).
type RegMr struct {
	Response    uint64
	Start       uint64
	Length      uint64
	HcaVa       uint64
	PdHandle    uint32
	AccessFlags uint32
}

// RegMrResp is struct ib_uverbs_reg_mr_resp (rdma/ib_user_verbs.h).
type RegMrResp struct {
	MrHandle uint32
	Lkey     uint32
	Rkey     uint32
}

// DeregMr is struct ib_uverbs_dereg_mr (rdma/ib_user_verbs.h).
type DeregMr struct {
	MrHandle uint32
}

// CreateCompChannel is struct ib_uverbs_create_comp_channel
// (rdma/ib_user_verbs.h).
type CreateCompChannel struct {
	Response uint64
}

// CreateCompChannelResp is struct ib_uverbs_create_comp_channel_resp
// (rdma/ib_user_verbs.h).
type CreateCompChannelResp struct {
	FD uint32
}

// CreateCq is struct ib_uverbs_create_cq (rdma/ib_user_verbs.h).
// CompChannel is -1 for none.
type CreateCq struct {
	Response    uint64
	UserHandle  uint64
	Cqe         uint32
	CompVector  uint32
	CompChannel int32
	Reserved    uint32
}

// CreateCqResp is struct ib_uverbs_create_cq_resp (rdma/ib_user_verbs.h).
type CreateCqResp struct {
	CqHandle uint32
	Cqe      uint32
}

// DestroyCq is struct ib_uverbs_destroy_cq (rdma/ib_user_verbs.h).
type DestroyCq struct {
	Response uint64
	CqHandle uint32
	Reserved uint32
}

// DestroyCqResp is struct ib_uverbs_destroy_cq_resp (rdma/ib_user_verbs.h).
type DestroyCqResp struct {
	CompEventsReported  uint32
	AsyncEventsReported uint32
}

// GlobalRoute is struct ib_uverbs_global_route (rdma/ib_user_verbs.h).
type GlobalRoute struct {
	Dgid         [16]byte
	FlowLabel    uint32
	SgidIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	Reserved     uint8
}

// AhAttr is struct ib_uverbs_ah_attr (rdma/ib_user_verbs.h).
type AhAttr struct {
	Grh         GlobalRoute
	Dlid        uint16
	Sl          uint8
	SrcPathBits uint8
	StaticRate  uint8
	IsGlobal    uint8
	PortNum     uint8
	Reserved    uint8
}

// CreateAh is struct ib_uverbs_create_ah (rdma/ib_user_verbs.h).
type CreateAh struct {
	Response   uint64
	UserHandle uint64
	PdHandle   uint32
	Reserved   uint32
	Attr       AhAttr
}

// CreateAhResp is struct ib_uverbs_create_ah_resp (rdma/ib_user_verbs.h).
type CreateAhResp struct {
	AhHandle uint32
}

// DestroyAh is struct ib_uverbs_destroy_ah (rdma/ib_user_verbs.h).
type DestroyAh struct {
	AhHandle uint32
}

// CreateQp is struct ib_uverbs_create_qp (rdma/ib_user_verbs.h).
type CreateQp struct {
	Response      uint64
	UserHandle    uint64
	PdHandle      uint32
	SendCqHandle  uint32
	RecvCqHandle  uint32
	SrqHandle     uint32
	MaxSendWr     uint32
	MaxRecvWr     uint32
	MaxSendSge    uint32
	MaxRecvSge    uint32
	MaxInlineData uint32
	SqSigAll      uint8
	QpType        uint8
	IsSrq         uint8
	Reserved      uint8
}

// CreateQpResp is struct ib_uverbs_create_qp_resp (rdma/ib_user_verbs.h).
type CreateQpResp struct {
	QpHandle      uint32
	Qpn           uint32
	MaxSendWr     uint32
	MaxRecvWr     uint32
	MaxSendSge    uint32
	MaxRecvSge    uint32
	MaxInlineData uint32
	Reserved      uint32
}

// QpDest is struct ib_uverbs_qp_dest (rdma/ib_user_verbs.h).
type QpDest struct {
	Dgid         [16]byte
	FlowLabel    uint32
	Dlid         uint16
	Reserved     uint16
	SgidIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	Sl           uint8
	SrcPathBits  uint8
	StaticRate   uint8
	IsGlobal     uint8
	PortNum      uint8
}

// QueryQp is struct ib_uverbs_query_qp (rdma/ib_user_verbs.h).
type QueryQp struct {
	Response uint64
	QpHandle uint32
	AttrMask uint32
}

// QueryQpResp is struct ib_uverbs_query_qp_resp (rdma/ib_user_verbs.h).
type QueryQpResp struct {
	Dest            QpDest
	AltDest         QpDest
	MaxSendWr       uint32
	MaxRecvWr       uint32
	MaxSendSge      uint32
	MaxRecvSge      uint32
	MaxInlineData   uint32
	Qkey            uint32
	RqPsn           uint32
	SqPsn           uint32
	DestQpNum       uint32
	QpAccessFlags   uint32
	PkeyIndex       uint16
	AltPkeyIndex    uint16
	QpState         uint8
	CurQpState      uint8
	PathMtu         uint8
	PathMigState    uint8
	SqDraining      uint8
	MaxRdAtomic     uint8
	MaxDestRdAtomic uint8
	MinRnrTimer     uint8
	PortNum         uint8
	Timeout         uint8
	RetryCnt        uint8
	RnrRetry        uint8
	AltPortNum      uint8
	AltTimeout      uint8
	SqSigAll        uint8
	Reserved        [5]uint8
}

// ModifyQp is struct ib_uverbs_modify_qp (rdma/ib_user_verbs.h).
type ModifyQp struct {
	Dest             QpDest
	AltDest          QpDest
	QpHandle         uint32
	AttrMask         uint32
	Qkey             uint32
	RqPsn            uint32
	SqPsn            uint32
	DestQpNum        uint32
	QpAccessFlags    uint32
	PkeyIndex        uint16
	AltPkeyIndex     uint16
	QpState          uint8
	CurQpState       uint8
	PathMtu          uint8
	PathMigState     uint8
	EnSqdAsyncNotify uint8
	MaxRdAtomic      uint8
	MaxDestRdAtomic  uint8
	MinRnrTimer      uint8
	PortNum          uint8
	Timeout          uint8
	RetryCnt         uint8
	RnrRetry         uint8
	AltPortNum       uint8
	AltTimeout       uint8
	Reserved         [2]uint8
}

// DestroyQp is struct ib_uverbs_destroy_qp (rdma/ib_user_verbs.h).
type DestroyQp struct {
	Response uint64
	QpHandle uint32
	Reserved uint32
}

// DestroyQpResp is struct ib_uverbs_destroy_qp_resp (rdma/ib_user_verbs.h).
type DestroyQpResp struct {
	EventsReported uint32
}

// CreateSrq is struct ib_uverbs_create_srq (rdma/ib_user_verbs.h).
type CreateSrq struct {
	Response   uint64
	UserHandle uint64
	PdHandle   uint32
	MaxWr      uint32
	MaxSge     uint32
	SrqLimit   uint32
}

// CreateSrqResp is struct ib_uverbs_create_srq_resp (rdma/ib_user_verbs.h).
type CreateSrqResp struct {
	SrqHandle uint32
	MaxWr     uint32
	MaxSge    uint32
	Srqn      uint32
}

// QuerySrq is struct ib_uverbs_query_srq (rdma/ib_user_verbs.h).
type QuerySrq struct {
	Response  uint64
	SrqHandle uint32
	Reserved  uint32
}

// QuerySrqResp is struct ib_uverbs_query_srq_resp (rdma/ib_user_verbs.h).
type QuerySrqResp struct {
	MaxWr    uint32
	MaxSge   uint32
	SrqLimit uint32
	Reserved uint32
}

// DestroySrq is struct ib_uverbs_destroy_srq (rdma/ib_user_verbs.h).
type DestroySrq struct {
	Response  uint64
	SrqHandle uint32
	Reserved  uint32
}

// DestroySrqResp is struct ib_uverbs_destroy_srq_resp (rdma/ib_user_verbs.h).
type DestroySrqResp struct {
	EventsReported uint32
}

// AsyncEventDesc is struct ib_uverbs_async_event_desc
// (rdma/ib_user_verbs.h): what a read() of the async event fd returns.
type AsyncEventDesc struct {
	Element   uint64
	EventType uint32
	Reserved  uint32
}

// CompEventDesc is struct ib_uverbs_comp_event_desc (rdma/ib_user_verbs.h):
// what a read() of a completion channel returns.
type CompEventDesc struct {
	CqHandle uint64
}

// AttachMcast is struct ib_uverbs_attach_mcast (rdma/ib_user_verbs.h);
// its driver_data[] is empty (the struct is 8-aligned: 24 bytes).
type AttachMcast struct {
	Gid      [16]uint8
	QpHandle uint32
	Mlid     uint16
	Reserved uint16
}

// DetachMcast is struct ib_uverbs_detach_mcast (rdma/ib_user_verbs.h).
type DetachMcast struct {
	Gid      [16]uint8
	QpHandle uint32
	Mlid     uint16
	Reserved uint16
}
