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

// flagString joins the names of the bits set in v with "|", adding the
// unnamed rest in hex; "0" for none.
func flagString(v uint64, names []flag) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	for _, f := range names {
		if v&f.bit != 0 {
			parts = append(parts, f.name)
			v &^= f.bit
		}
	}
	if v != 0 {
		parts = append(parts, fmt.Sprintf("%#x", v))
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

var deviceCapNames = []flag{
	{1 << 0, "RESIZE_MAX_WR"}, {1 << 1, "BAD_PKEY_CNTR"}, {1 << 2, "BAD_QKEY_CNTR"}, {1 << 3, "RAW_MULTI"},
	{1 << 4, "AUTO_PATH_MIG"}, {1 << 5, "CHANGE_PHY_PORT"}, {1 << 6, "UD_AV_PORT_ENFORCE"},
	{1 << 7, "CURR_QP_STATE_MOD"}, {1 << 8, "SHUTDOWN_PORT"}, {1 << 9, "INIT_TYPE"},
	{1 << 10, "PORT_ACTIVE_EVENT"}, {1 << 11, "SYS_IMAGE_GUID"}, {1 << 12, "RC_RNR_NAK_GEN"},
	{1 << 13, "SRQ_RESIZE"}, {1 << 14, "N_NOTIFY_CQ"}, {1 << 17, "MEM_WINDOW"}, {1 << 18, "UD_IP_CSUM"},
	{1 << 20, "XRC"}, {1 << 21, "MEM_MGT_EXTENSIONS"}, {1 << 23, "MEM_WINDOW_TYPE_2A"},
	{1 << 24, "MEM_WINDOW_TYPE_2B"}, {1 << 25, "RC_IP_CSUM"}, {1 << 26, "RAW_IP_CSUM"},
	{1 << 29, "MANAGED_FLOW_STEERING"}, {1 << 34, "RAW_SCATTER_FCS"}, {1 << 36, "PCI_WRITE_END_PADDING"},
	{1 << 41, "CC_DMA_BOUNCE"},
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

// String lists the capabilities.
func (c ODPGeneralCaps) String() string {
	return flagString(uint64(c), []flag{{1, "ODP_SUPPORT"}, {2, "ODP_SUPPORT_IMPLICIT"}})
}

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

// String lists the capabilities by rdma-core's names.
func (c ODPTransportCaps) String() string {
	return flagString(uint64(c), []flag{{1 << 0, "SUPPORT_SEND"}, {1 << 1, "SUPPORT_RECV"}, {1 << 2, "SUPPORT_WRITE"},
		{1 << 3, "SUPPORT_READ"}, {1 << 4, "SUPPORT_ATOMIC"}, {1 << 5, "SUPPORT_SRQ"}, {1 << 6, "SUPPORT_FLUSH"},
		{1 << 7, "SUPPORT_ATOMIC_WRITE"}})
}

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

// String lists the capabilities.
func (c RawPacketCaps) String() string {
	return flagString(uint64(c), []flag{{1, "CVLAN_STRIPPING"}, {2, "SCATTER_FCS"}, {4, "IP_CSUM"}, {8, "DELAY_DROP"}})
}
