package uverbs

import (
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// PortAttr is what QUERY_PORT reports (struct ib_uverbs_query_port_resp_ex).
type PortAttr struct {
	State           ib.PortState
	MaxMTU          ib.MTU
	ActiveMTU       ib.MTU
	GIDTableLen     uint32
	Caps            PortCaps  // port_cap_flags
	Caps2           PortCaps2 // port_cap_flags2 (ioctl interface only)
	MaxMsgSize      uint32
	BadPKeyCounter  uint32
	QKeyViolCounter uint32
	PKeyTableLen    uint16
	LID             uint16
	SMLID           uint16
	LMC             uint8
	MaxVLNum        uint8
	SMSL            uint8
	SubnetTimeout   uint8
	InitTypeReply   uint8
	ActiveWidth     Width
	ActiveSpeed     Speed  // the legacy u8 speed, capped at NDR
	ActiveSpeedEx   uint32 // the full speed (Linux 6.6+; 0 before)
	PhysState       ib.PhysState
	LinkLayer       ib.LinkLayer
	GRHRequired     bool // IB_UVERBS_QPF_GRH_REQUIRED: every AH and QP path needs a GRH
}

// Speed is an IBA link speed code (enum ib_port_speed).
type Speed uint32

// String returns the lane rate as rdma-core's ibv_devinfo prints it
// ("2.5 Gbps").
func (s Speed) String() string {
	switch s {
	case 1:
		return "2.5 Gbps"
	case 2:
		return "5.0 Gbps"
	case 4, 8:
		return "10.0 Gbps"
	case 16:
		return "14.0 Gbps"
	case 32:
		return "25.0 Gbps"
	case 64:
		return "50.0 Gbps"
	case 128:
		return "100.0 Gbps"
	case 256:
		return "200.0 Gbps"
	}
	return "invalid speed"
}

// Width is an IBA link width code (enum ib_port_width).
type Width uint8

// String returns the lane count as rdma-core prints it ("4").
func (w Width) String() string {
	switch w {
	case 1:
		return "1"
	case 2:
		return "4"
	case 4:
		return "8"
	case 8:
		return "12"
	case 16:
		return "2"
	}
	return "invalid width"
}

// PortCaps is the port capability mask (enum ib_uverbs_query_port_cap_flags,
// IBA PortInfo:CapabilityMask).
type PortCaps uint32

// Port capabilities (a selection; the set is the IBA CapabilityMask).
const (
	PortSM                  PortCaps = 1 << 1
	PortNoticeSup           PortCaps = 1 << 2
	PortTrapSup             PortCaps = 1 << 3
	PortOptIPDSup           PortCaps = 1 << 4
	PortAutoMigrSup         PortCaps = 1 << 5
	PortSLMapSup            PortCaps = 1 << 6
	PortMKeyNVRAM           PortCaps = 1 << 7
	PortPKeyNVRAM           PortCaps = 1 << 8
	PortLEDInfoSup          PortCaps = 1 << 9
	PortSMDisabled          PortCaps = 1 << 10
	PortSystemImageGUIDSup  PortCaps = 1 << 11
	PortPKeySwExtPortTrap   PortCaps = 1 << 12
	PortExtendedSpeedsSup   PortCaps = 1 << 14
	PortCapMask2Sup         PortCaps = 1 << 15
	PortCMSup               PortCaps = 1 << 16
	PortSNMPTunnelSup       PortCaps = 1 << 17
	PortReinitSup           PortCaps = 1 << 18
	PortDeviceMgmtSup       PortCaps = 1 << 19
	PortVendorClassSup      PortCaps = 1 << 20
	PortDRNoticeSup         PortCaps = 1 << 21
	PortCapMaskNoticeSup    PortCaps = 1 << 22
	PortBootMgmtSup         PortCaps = 1 << 23
	PortLinkLatencySup      PortCaps = 1 << 24
	PortClientRegSup        PortCaps = 1 << 25
	PortIPBasedGIDs         PortCaps = 1 << 26
	PortLinkSpeedWidthTable PortCaps = 1 << 27
	PortVendorSpecificMADs  PortCaps = 1 << 28
	PortMcastPKeyTrapSup    PortCaps = 1 << 29
	PortMcastFDBTopSup      PortCaps = 1 << 30
	PortHierarchyInfoSup    PortCaps = 1 << 31
)

// String prints the mask in hex, as ibv_devinfo does.
func (c PortCaps) String() string { return fmt.Sprintf("0x%08x", uint32(c)) }

// PortCaps2 is the second port capability mask (IBA CapabilityMask2).
type PortCaps2 uint16

// String prints the mask in hex, as ibv_devinfo does.
func (c PortCaps2) String() string { return fmt.Sprintf("0x%04x", uint16(c)) }

// QueryPort returns the attributes of port (from 1). The ioctl interface
// carries port_cap_flags2 and active_speed_ex; the write() one does not.
func (c *Context) QueryPort(port int) (*PortAttr, error) {
	op := fmt.Sprintf("query port %d", port)
	if port < 1 || port > 255 {
		return nil, invalid(c.dev.Name, op, "ports are numbered from 1 to 255")
	}
	var resp abi.QueryPortRespEx
	if c.ioctlOK {
		call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_PORT)
		call.Const(abi.UVERBS_ATTR_QUERY_PORT_PORT_NUM, uint64(port))
		call.Out(abi.UVERBS_ATTR_QUERY_PORT_RESP, kabi.Bytes(&resp))
		if err := c.ioctl(op, call); err != nil {
			return nil, err
		}
	} else {
		req := abi.QueryPort{PortNum: uint8(port)}
		if err := c.write(op, abi.CmdQueryPort.Build(&req, &resp.LegacyResp, nil, nil)); err != nil {
			return nil, err
		}
	}
	return decodePortAttr(&resp), nil
}

func decodePortAttr(r *abi.QueryPortRespEx) *PortAttr {
	l := &r.LegacyResp
	return &PortAttr{
		State: ib.PortState(l.State), MaxMTU: ib.MTU(l.MaxMtu), ActiveMTU: ib.MTU(l.ActiveMtu),
		GIDTableLen: l.GidTblLen, Caps: PortCaps(l.PortCapFlags), Caps2: PortCaps2(r.PortCapFlags2),
		MaxMsgSize: l.MaxMsgSz, BadPKeyCounter: l.BadPkeyCntr, QKeyViolCounter: l.QkeyViolCntr,
		PKeyTableLen: l.PkeyTblLen, LID: l.Lid, SMLID: l.SmLid, LMC: l.Lmc, MaxVLNum: l.MaxVlNum, SMSL: l.SmSl,
		SubnetTimeout: l.SubnetTimeout, InitTypeReply: l.InitTypeReply, ActiveWidth: Width(l.ActiveWidth),
		ActiveSpeed: Speed(l.ActiveSpeed), ActiveSpeedEx: r.ActiveSpeedEx, PhysState: ib.PhysState(l.PhysState),
		LinkLayer: ib.LinkLayer(l.LinkLayer), GRHRequired: l.Flags&1 != 0,
	}
}
