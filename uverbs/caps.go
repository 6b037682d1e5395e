package uverbs

import (
	"fmt"
	"strings"
)

// flag names one bit of a capability set.
type flag struct {
	bit  uint64
	name string
}

// flagNames lists the names of the bits of v that names has, in the
// table's order, and returns the set bits it has none for.
func flagNames(v uint64, names []flag) (out []string, unknown uint64) {
	for _, f := range names {
		if v&f.bit != 0 {
			out = append(out, f.name)
			v &^= f.bit
		}
	}
	return out, v
}

// flagString joins the names of the bits set in v with "|", adding the
// unnamed rest in hex; "0" for none.
func flagString(v uint64, names []flag) string {
	if v == 0 {
		return "0"
	}
	parts, rest := flagNames(v, names)
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", rest))
	}
	return strings.Join(parts, "|")
}

// DeviceCaps is the device capability set (enum ib_uverbs_device_cap_flags
// in rdma/ib_user_verbs.h; IBV_DEVICE_* in libibverbs).
type DeviceCaps uint64

// Device capabilities.
const (
	DeviceResizeMaxWR         DeviceCaps = 1 << 0  // IB_UVERBS_DEVICE_RESIZE_MAX_WR
	DeviceBadPKeyCntr         DeviceCaps = 1 << 1  // IB_UVERBS_DEVICE_BAD_PKEY_CNTR
	DeviceBadQKeyCntr         DeviceCaps = 1 << 2  // IB_UVERBS_DEVICE_BAD_QKEY_CNTR
	DeviceRawMulti            DeviceCaps = 1 << 3  // IB_UVERBS_DEVICE_RAW_MULTI
	DeviceAutoPathMig         DeviceCaps = 1 << 4  // IB_UVERBS_DEVICE_AUTO_PATH_MIG
	DeviceChangePhyPort       DeviceCaps = 1 << 5  // IB_UVERBS_DEVICE_CHANGE_PHY_PORT
	DeviceUDAVPortEnforce     DeviceCaps = 1 << 6  // IB_UVERBS_DEVICE_UD_AV_PORT_ENFORCE
	DeviceCurrQPStateMod      DeviceCaps = 1 << 7  // IB_UVERBS_DEVICE_CURR_QP_STATE_MOD
	DeviceShutdownPort        DeviceCaps = 1 << 8  // IB_UVERBS_DEVICE_SHUTDOWN_PORT
	DeviceInitType            DeviceCaps = 1 << 9  // IBV_DEVICE_INIT_TYPE (no longer set by the kernel)
	DevicePortActiveEvent     DeviceCaps = 1 << 10 // IB_UVERBS_DEVICE_PORT_ACTIVE_EVENT
	DeviceSysImageGUID        DeviceCaps = 1 << 11 // IB_UVERBS_DEVICE_SYS_IMAGE_GUID
	DeviceRCRNRNAKGen         DeviceCaps = 1 << 12 // IB_UVERBS_DEVICE_RC_RNR_NAK_GEN
	DeviceSRQResize           DeviceCaps = 1 << 13 // IB_UVERBS_DEVICE_SRQ_RESIZE
	DeviceNNotifyCQ           DeviceCaps = 1 << 14 // IB_UVERBS_DEVICE_N_NOTIFY_CQ
	DeviceMemWindow           DeviceCaps = 1 << 17 // IB_UVERBS_DEVICE_MEM_WINDOW
	DeviceUDIPCsum            DeviceCaps = 1 << 18 // IB_UVERBS_DEVICE_UD_IP_CSUM
	DeviceXRC                 DeviceCaps = 1 << 20 // IB_UVERBS_DEVICE_XRC
	DeviceMemMgtExtensions    DeviceCaps = 1 << 21 // IB_UVERBS_DEVICE_MEM_MGT_EXTENSIONS
	DeviceMemWindowType2A     DeviceCaps = 1 << 23 // IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2A
	DeviceMemWindowType2B     DeviceCaps = 1 << 24 // IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2B
	DeviceRCIPCsum            DeviceCaps = 1 << 25 // IB_UVERBS_DEVICE_RC_IP_CSUM
	DeviceRawIPCsum           DeviceCaps = 1 << 26 // IB_UVERBS_DEVICE_RAW_IP_CSUM
	DeviceManagedFlowSteering DeviceCaps = 1 << 29 // IB_UVERBS_DEVICE_MANAGED_FLOW_STEERING
	DeviceRawScatterFCS       DeviceCaps = 1 << 34 // IB_UVERBS_DEVICE_RAW_SCATTER_FCS
	DevicePCIWriteEndPadding  DeviceCaps = 1 << 36 // IB_UVERBS_DEVICE_PCI_WRITE_END_PADDING
	DeviceCCDMABounce         DeviceCaps = 1 << 41 // IBV_DEVICE_CC_DMA_BOUNCE (rdma-core 64)
)

// deviceCapNames is the one table of device capability names: libibverbs'
// IBV_DEVICE_* without the prefix, in bit order, as ibv_devinfo -v prints
// them (the bits above 31 under device_cap_flags_ex).
var deviceCapNames = []flag{
	{uint64(DeviceResizeMaxWR), "RESIZE_MAX_WR"}, {uint64(DeviceBadPKeyCntr), "BAD_PKEY_CNTR"},
	{uint64(DeviceBadQKeyCntr), "BAD_QKEY_CNTR"}, {uint64(DeviceRawMulti), "RAW_MULTI"},
	{uint64(DeviceAutoPathMig), "AUTO_PATH_MIG"}, {uint64(DeviceChangePhyPort), "CHANGE_PHY_PORT"},
	{uint64(DeviceUDAVPortEnforce), "UD_AV_PORT_ENFORCE"}, {uint64(DeviceCurrQPStateMod), "CURR_QP_STATE_MOD"},
	{uint64(DeviceShutdownPort), "SHUTDOWN_PORT"}, {uint64(DeviceInitType), "INIT_TYPE"},
	{uint64(DevicePortActiveEvent), "PORT_ACTIVE_EVENT"}, {uint64(DeviceSysImageGUID), "SYS_IMAGE_GUID"},
	{uint64(DeviceRCRNRNAKGen), "RC_RNR_NAK_GEN"}, {uint64(DeviceSRQResize), "SRQ_RESIZE"},
	{uint64(DeviceNNotifyCQ), "N_NOTIFY_CQ"}, {uint64(DeviceMemWindow), "MEM_WINDOW"},
	{uint64(DeviceUDIPCsum), "UD_IP_CSUM"}, {uint64(DeviceXRC), "XRC"},
	{uint64(DeviceMemMgtExtensions), "MEM_MGT_EXTENSIONS"}, {uint64(DeviceMemWindowType2A), "MEM_WINDOW_TYPE_2A"},
	{uint64(DeviceMemWindowType2B), "MEM_WINDOW_TYPE_2B"}, {uint64(DeviceRCIPCsum), "RC_IP_CSUM"},
	{uint64(DeviceRawIPCsum), "RAW_IP_CSUM"}, {uint64(DeviceManagedFlowSteering), "MANAGED_FLOW_STEERING"},
	{uint64(DeviceRawScatterFCS), "RAW_SCATTER_FCS"}, {uint64(DevicePCIWriteEndPadding), "PCI_WRITE_END_PADDING"},
	{uint64(DeviceCCDMABounce), "CC_DMA_BOUNCE"},
}

// Names returns the libibverbs name of each capability in c, lowest bit
// first ("RESIZE_MAX_WR"); bits without a name are left to Unknown.
func (c DeviceCaps) Names() []string {
	n, _ := flagNames(uint64(c), deviceCapNames)
	return n
}

// Unknown returns the capabilities in c that have no name.
func (c DeviceCaps) Unknown() DeviceCaps {
	_, u := flagNames(uint64(c), deviceCapNames)
	return DeviceCaps(u)
}

// String lists the capabilities by their libibverbs names, joined by "|".
func (c DeviceCaps) String() string { return flagString(uint64(c), deviceCapNames) }

// AtomicCap is the device's atomic operation support (enum ib_atomic_cap).
type AtomicCap uint32

// Atomic capabilities.
const (
	AtomicNone AtomicCap = 0 // IB_ATOMIC_NONE
	AtomicHCA  AtomicCap = 1 // IB_ATOMIC_HCA: atomic within this device
	AtomicGlob AtomicCap = 2 // IB_ATOMIC_GLOB: atomic with respect to the CPU too
)

// String returns rdma-core's name ("ATOMIC_HCA").
func (a AtomicCap) String() string {
	switch a {
	case AtomicNone:
		return "ATOMIC_NONE"
	case AtomicHCA:
		return "ATOMIC_HCA"
	case AtomicGlob:
		return "ATOMIC_GLOB"
	}
	return "invalid atomic capability"
}

// ODPGeneralCaps is the general on-demand-paging capability set (enum
// ib_odp_general_cap_bits).
type ODPGeneralCaps uint64

// ODP general capabilities.
const (
	ODPSupport         ODPGeneralCaps = 1 << 0 // IB_ODP_SUPPORT
	ODPSupportImplicit ODPGeneralCaps = 1 << 1 // IB_ODP_SUPPORT_IMPLICIT
)

var odpGeneralNames = []flag{{uint64(ODPSupport), "ODP_SUPPORT"}, {uint64(ODPSupportImplicit), "ODP_SUPPORT_IMPLICIT"}}

// Names returns the name of each capability in c, as ibv_devinfo prints
// them; bits without a name are left to Unknown.
func (c ODPGeneralCaps) Names() []string {
	n, _ := flagNames(uint64(c), odpGeneralNames)
	return n
}

// Unknown returns the capabilities in c that have no name.
func (c ODPGeneralCaps) Unknown() ODPGeneralCaps {
	_, u := flagNames(uint64(c), odpGeneralNames)
	return ODPGeneralCaps(u)
}

// String lists the capabilities.
func (c ODPGeneralCaps) String() string { return flagString(uint64(c), odpGeneralNames) }

// ODPTransportCaps is a per-transport on-demand-paging capability set
// (enum ib_odp_transport_cap_bits).
type ODPTransportCaps uint32

// ODP transport capabilities.
const (
	ODPSupportSend        ODPTransportCaps = 1 << 0 // IB_ODP_SUPPORT_SEND
	ODPSupportRecv        ODPTransportCaps = 1 << 1 // IB_ODP_SUPPORT_RECV
	ODPSupportWrite       ODPTransportCaps = 1 << 2 // IB_ODP_SUPPORT_WRITE
	ODPSupportRead        ODPTransportCaps = 1 << 3 // IB_ODP_SUPPORT_READ
	ODPSupportAtomic      ODPTransportCaps = 1 << 4 // IB_ODP_SUPPORT_ATOMIC
	ODPSupportSRQRecv     ODPTransportCaps = 1 << 5 // IB_ODP_SUPPORT_SRQ_RECV
	ODPSupportFlush       ODPTransportCaps = 1 << 6 // IB_ODP_SUPPORT_FLUSH
	ODPSupportAtomicWrite ODPTransportCaps = 1 << 7 // IB_ODP_SUPPORT_ATOMIC_WRITE
)

var odpTransportNames = []flag{{uint64(ODPSupportSend), "SUPPORT_SEND"}, {uint64(ODPSupportRecv), "SUPPORT_RECV"},
	{uint64(ODPSupportWrite), "SUPPORT_WRITE"}, {uint64(ODPSupportRead), "SUPPORT_READ"},
	{uint64(ODPSupportAtomic), "SUPPORT_ATOMIC"}, {uint64(ODPSupportSRQRecv), "SUPPORT_SRQ"},
	{uint64(ODPSupportFlush), "SUPPORT_FLUSH"}, {uint64(ODPSupportAtomicWrite), "SUPPORT_ATOMIC_WRITE"}}

// Names returns rdma-core's name of each capability in c, as ibv_devinfo
// prints them; bits without a name are left to Unknown.
func (c ODPTransportCaps) Names() []string {
	n, _ := flagNames(uint64(c), odpTransportNames)
	return n
}

// Unknown returns the capabilities in c that have no name.
func (c ODPTransportCaps) Unknown() ODPTransportCaps {
	_, u := flagNames(uint64(c), odpTransportNames)
	return ODPTransportCaps(u)
}

// String lists the capabilities by rdma-core's names.
func (c ODPTransportCaps) String() string { return flagString(uint64(c), odpTransportNames) }

// RawPacketCaps is the raw packet QP capability set (enum
// ib_uverbs_raw_packet_caps).
type RawPacketCaps uint32

// Raw packet capabilities.
const (
	RawPacketCVLANStripping RawPacketCaps = 1 << 0 // IB_UVERBS_RAW_PACKET_CAP_CVLAN_STRIPPING
	RawPacketScatterFCS     RawPacketCaps = 1 << 1 // IB_UVERBS_RAW_PACKET_CAP_SCATTER_FCS
	RawPacketIPCsum         RawPacketCaps = 1 << 2 // IB_UVERBS_RAW_PACKET_CAP_IP_CSUM
	RawPacketDelayDrop      RawPacketCaps = 1 << 3 // IB_UVERBS_RAW_PACKET_CAP_DELAY_DROP
)

var rawPacketNames = []flag{{uint64(RawPacketCVLANStripping), "CVLAN_STRIPPING"},
	{uint64(RawPacketScatterFCS), "SCATTER_FCS"}, {uint64(RawPacketIPCsum), "IP_CSUM"},
	{uint64(RawPacketDelayDrop), "DELAY_DROP"}}

// Names returns the name of each capability in c (the uapi's, without
// IB_UVERBS_RAW_PACKET_CAP_); bits without a name are left to Unknown.
func (c RawPacketCaps) Names() []string {
	n, _ := flagNames(uint64(c), rawPacketNames)
	return n
}

// Unknown returns the capabilities in c that have no name.
func (c RawPacketCaps) Unknown() RawPacketCaps {
	_, u := flagNames(uint64(c), rawPacketNames)
	return RawPacketCaps(u)
}

// String lists the capabilities.
func (c RawPacketCaps) String() string { return flagString(uint64(c), rawPacketNames) }
