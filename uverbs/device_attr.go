package uverbs

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// DeviceAttr is what QUERY_DEVICE reports (struct
// ib_uverbs_query_device_resp and, where the kernel has it, the extended
// ib_uverbs_ex_query_device_resp).
type DeviceAttr struct {
	FirmwareVersion       uint64 // raw fw_ver; see FirmwareString
	NodeGUID              ib.GUID
	SysImageGUID          ib.GUID
	MaxMRSize             uint64
	PageSizeCap           uint64
	VendorID              uint32
	VendorPartID          uint32
	HWVersion             uint32
	MaxQP                 uint32
	MaxQPWR               uint32
	Caps                  DeviceCaps // device_cap_flags (the low 32 bits)
	MaxSGE                uint32
	MaxSGERd              uint32
	MaxCQ                 uint32
	MaxCQE                uint32
	MaxMR                 uint32
	MaxPD                 uint32
	MaxQPRdAtom           uint32
	MaxEERdAtom           uint32
	MaxResRdAtom          uint32
	MaxQPInitRdAtom       uint32
	MaxEEInitRdAtom       uint32
	AtomicCap             AtomicCap
	MaxEE                 uint32
	MaxRDD                uint32
	MaxMW                 uint32
	MaxRawIPv6QP          uint32
	MaxRawEthyQP          uint32
	MaxMcastGrp           uint32
	MaxMcastQPAttach      uint32
	MaxTotalMcastQPAttach uint32
	MaxAH                 uint32
	MaxFMR                uint32
	MaxMapPerFMR          uint32
	MaxSRQ                uint32
	MaxSRQWR              uint32
	MaxSRQSGE             uint32
	MaxPKeys              uint16
	LocalCAAckDelay       uint8
	PhysPortCount         uint8

	// Extended is how many bytes of the extended response the kernel
	// filled (its response_length); 0 when only the base query worked.
	// The fields below are zero where the kernel did not fill them.
	Extended uint32

	ODP                     ODPCaps
	CompletionTimestampMask uint64
	HCACoreClock            uint64     // kHz
	CapsEx                  DeviceCaps // device_cap_flags_ex: all 64 bits
	RSS                     RSSCaps
	MaxWQTypeRQ             uint32
	RawPacketCaps           RawPacketCaps
	TM                      TMCaps
	CQModeration            CQModerationCaps
	MaxDMSize               uint64
}

// ODPCaps are the on-demand paging capabilities (struct
// ib_uverbs_odp_caps, plus xrc_odp_caps).
type ODPCaps struct {
	General ODPGeneralCaps
	RC      ODPTransportCaps
	UC      ODPTransportCaps
	UD      ODPTransportCaps
	XRC     ODPTransportCaps
}

// RSSCaps is struct ib_uverbs_rss_caps.
type RSSCaps struct {
	SupportedQPTypes           uint32 // bit n set: ib.QPType(n) supported
	MaxRWQIndirectionTables    uint32
	MaxRWQIndirectionTableSize uint32
}

// TMCaps is struct ib_uverbs_tm_caps (tag matching).
type TMCaps struct {
	MaxRndvHdrSize uint32
	MaxNumTags     uint32
	Flags          uint32
	MaxOps         uint32
	MaxSGE         uint32
}

// CQModerationCaps is struct ib_uverbs_cq_moderation_caps.
type CQModerationCaps struct {
	MaxCount  uint16
	MaxPeriod uint16 // microseconds
}

// FirmwareString formats FirmwareVersion the way rdma-core's provider for
// driver does ("0.0.0" for rxe), or returns "" when the provider leaves
// the string empty.
func (a *DeviceAttr) FirmwareString(driver ib.DriverID) string {
	major, minor, sub := a.FirmwareVersion>>32&0xffff, a.FirmwareVersion>>16&0xffff, a.FirmwareVersion&0xffff
	switch driver {
	case ib.DriverRXE, ib.DriverSIW:
		return itoa(major) + "." + itoa(minor) + "." + itoa(sub)
	case ib.DriverMLX5:
		s := itoa(sub)
		for len(s) < 4 {
			s = "0" + s
		}
		return itoa(major) + "." + itoa(minor) + "." + s
	}
	return ""
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

// QueryDevice returns the device's attributes: the extended query where
// the kernel has it, else the base one.
func (c *Context) QueryDevice() (*DeviceAttr, error) {
	const op = "query device"
	var req abi.ExQueryDevice
	var resp abi.ExQueryDeviceResp
	err := c.write(op, abi.CmdExQueryDevice.Build(&req, &resp, nil, nil))
	if err != nil {
		if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
			return nil, err
		}
		resp = abi.ExQueryDeviceResp{}
		base := abi.QueryDevice{}
		if err := c.write(op, abi.CmdQueryDevice.Build(&base, &resp.Base, nil, nil)); err != nil {
			return nil, err
		}
	}
	return decodeDeviceAttr(&resp), nil
}

// decodeDeviceAttr converts a (possibly partly filled) response.
func decodeDeviceAttr(r *abi.ExQueryDeviceResp) *DeviceAttr {
	b := &r.Base
	a := &DeviceAttr{
		FirmwareVersion: b.FwVer, NodeGUID: ib.GUID(b.NodeGUID), SysImageGUID: ib.GUID(b.SysImageGUID),
		MaxMRSize: b.MaxMrSize, PageSizeCap: b.PageSizeCap, VendorID: b.VendorID, VendorPartID: b.VendorPartID,
		HWVersion: b.HwVer, MaxQP: b.MaxQp, MaxQPWR: b.MaxQpWr, Caps: DeviceCaps(b.DeviceCapFlags),
		MaxSGE: b.MaxSge, MaxSGERd: b.MaxSgeRd, MaxCQ: b.MaxCq, MaxCQE: b.MaxCqe, MaxMR: b.MaxMr, MaxPD: b.MaxPd,
		MaxQPRdAtom: b.MaxQpRdAtom, MaxEERdAtom: b.MaxEeRdAtom, MaxResRdAtom: b.MaxResRdAtom,
		MaxQPInitRdAtom: b.MaxQpInitRdAtom, MaxEEInitRdAtom: b.MaxEeInitRdAtom, AtomicCap: AtomicCap(b.AtomicCap),
		MaxEE: b.MaxEe, MaxRDD: b.MaxRdd, MaxMW: b.MaxMw, MaxRawIPv6QP: b.MaxRawIPv6Qp, MaxRawEthyQP: b.MaxRawEthyQp,
		MaxMcastGrp: b.MaxMcastGrp, MaxMcastQPAttach: b.MaxMcastQpAttach, MaxTotalMcastQPAttach: b.MaxTotalMcastQpAttach,
		MaxAH: b.MaxAh, MaxFMR: b.MaxFmr, MaxMapPerFMR: b.MaxMapPerFmr, MaxSRQ: b.MaxSrq, MaxSRQWR: b.MaxSrqWr,
		MaxSRQSGE: b.MaxSrqSge, MaxPKeys: b.MaxPkeys, LocalCAAckDelay: b.LocalCaAckDelay, PhysPortCount: b.PhysPortCnt,
		Extended: r.ResponseLength,
	}
	// has reports whether the kernel's response covers a field ending at end.
	has := func(end uintptr) bool { return uintptr(r.ResponseLength) >= end }
	const (
		endODP    = 208
		endTS     = 216
		endClock  = 224
		endCapsEx = 232
		endRSS    = 248
		endWQ     = 252
		endRaw    = 256
		endTM     = 280
		endCQMod  = 288
		endDM     = 296
		endXRCODP = 300
	)
	if has(endODP) {
		a.ODP.General = ODPGeneralCaps(r.OdpCaps.GeneralCaps)
		a.ODP.RC = ODPTransportCaps(r.OdpCaps.RcOdpCaps)
		a.ODP.UC = ODPTransportCaps(r.OdpCaps.UcOdpCaps)
		a.ODP.UD = ODPTransportCaps(r.OdpCaps.UdOdpCaps)
	}
	if has(endTS) {
		a.CompletionTimestampMask = r.TimestampMask
	}
	if has(endClock) {
		a.HCACoreClock = r.HcaCoreClock
	}
	if has(endCapsEx) {
		a.CapsEx = DeviceCaps(r.DeviceCapFlagsEx)
	}
	if has(endRSS) {
		a.RSS = RSSCaps{r.RssCaps.SupportedQpts, r.RssCaps.MaxRwqIndirectionTables, r.RssCaps.MaxRwqIndirectionTableSize}
	}
	if has(endWQ) {
		a.MaxWQTypeRQ = r.MaxWqTypeRq
	}
	if has(endRaw) {
		a.RawPacketCaps = RawPacketCaps(r.RawPacketCaps)
	}
	if has(endTM) {
		t := r.TmCaps
		a.TM = TMCaps{t.MaxRndvHdrSize, t.MaxNumTags, t.Flags, t.MaxOps, t.MaxSge}
	}
	if has(endCQMod) {
		a.CQModeration = CQModerationCaps{r.CqModerationCaps.MaxCqModerationCount, r.CqModerationCaps.MaxCqModerationPeriod}
	}
	if has(endDM) {
		a.MaxDMSize = r.MaxDmSize
	}
	if has(endXRCODP) {
		a.ODP.XRC = ODPTransportCaps(r.XrcOdpCaps)
	}
	return a
}
