package nldev

import "strings"

// DeviceCaps is a device's capability mask (the kernel's device_cap_flags,
// enum ib_device_cap_flags), as RDMA_NLDEV_ATTR_CAP_FLAGS carries it.
type DeviceCaps uint64

// deviceCapNames names each bit as iproute2 does (rdma/dev.c); bits 16
// and 28 and bits above 36 have no name.
var deviceCapNames = map[uint]string{
	0: "RESIZE_MAX_WR", 1: "BAD_PKEY_CNTR", 2: "BAD_QKEY_CNTR", 3: "RAW_MULTI",
	4: "AUTO_PATH_MIG", 5: "CHANGE_PHY_PORT", 6: "UD_AV_PORT_ENFORCE_PORT_ENFORCE",
	7: "CURR_QP_STATE_MOD", 8: "SHUTDOWN_PORT", 9: "INIT_TYPE", 10: "PORT_ACTIVE_EVENT",
	11: "SYS_IMAGE_GUID", 12: "RC_RNR_NAK_GEN", 13: "SRQ_RESIZE", 14: "N_NOTIFY_CQ",
	15: "LOCAL_DMA_LKEY", 17: "MEM_WINDOW", 18: "UD_IP_CSUM", 19: "UD_TSO", 20: "XRC",
	21: "MEM_MGT_EXTENSIONS", 22: "BLOCK_MULTICAST_LOOPBACK", 23: "MEM_WINDOW_TYPE_2A",
	24: "MEM_WINDOW_TYPE_2B", 25: "RC_IP_CSUM", 26: "RAW_IP_CSUM", 27: "CROSS_CHANNEL",
	29: "MANAGED_FLOW_STEERING", 30: "SIGNATURE_HANDOVER", 31: "ON_DEMAND_PAGING",
	32: "SG_GAPS_REG", 33: "VIRTUAL_FUNCTION", 34: "RAW_SCATTER_FCS",
	35: "RDMA_NETDEV_OPA_VNIC", 36: "PCI_WRITE_END_PADDING",
}

// Names returns the name of every set bit, lowest first; a bit without a
// name is "UNKNOWN", as iproute2 prints it.
func (c DeviceCaps) Names() []string { return bitNames(uint64(c), deviceCapNames) }

// Has reports whether every bit of mask is set.
func (c DeviceCaps) Has(mask DeviceCaps) bool { return c&mask == mask }

// String joins Names with ", ", the form of iproute2's "caps: <...>".
func (c DeviceCaps) String() string { return strings.Join(c.Names(), ", ") }

// PortCaps is an IB port's capability mask: PortInfo:CapabilityMask in the
// low 32 bits and CapabilityMask2 in the high ones (RDMA_NLDEV_ATTR_CAP_FLAGS
// in PORT_GET replies).
type PortCaps uint64

// portCapNames names each bit as iproute2 does (rdma/link.c, spelling
// included).
var portCapNames = map[uint]string{
	0: "RESERVED", 1: "SM", 2: "NOTICE", 3: "TRAP", 4: "OPT_IPD", 5: "AUTO_MIGR",
	6: "SL_MAP", 7: "MKEY_NVRAM", 8: "PKEY_NVRAM", 9: "LED_INFO", 10: "SM_DISABLED",
	11: "SYS_IMAGE_GUID", 12: "PKEY_SW_EXT_PORT_TRAP", 13: "CABLE_INFO",
	14: "EXTENDED_SPEEDS", 15: "CAP_MASK2", 16: "CM", 17: "SNMP_TUNNEL", 18: "REINIT",
	19: "DEVICE_MGMT", 20: "VENDOR_CLASS", 21: "DR_NOTICE", 22: "CAP_MASK_NOTICE",
	23: "BOOT_MGMT", 24: "LINK_LATENCY", 25: "CLIENT_REG", 26: "OTHER_LOCAL_CHANGES",
	27: "LINK_SPPED_WIDTH", 28: "VENDOR_SPECIFIC_MADS", 29: "MULT_PKER_TRAP",
	30: "MULT_FDB", 31: "HIERARCHY_INFO",
	32: "SET_NODE_DESC", 33: "EXT_INFO", 34: "VIRT", 35: "SWITCH_POR_STATE_TABLE",
	36: "LINK_WIDTH_2X", 37: "LINK_SPEED_HDR",
}

// Names returns the name of every set bit, lowest first ("UNKNOWN" for
// bits without a name).
func (c PortCaps) Names() []string { return bitNames(uint64(c), portCapNames) }

// Has reports whether every bit of mask is set.
func (c PortCaps) Has(mask PortCaps) bool { return c&mask == mask }

// String joins Names with ", ".
func (c PortCaps) String() string { return strings.Join(c.Names(), ", ") }

// bitNames lists the names of the set bits of v, lowest first.
func bitNames(v uint64, names map[uint]string) []string {
	var out []string
	for bit := uint(0); bit < 64; bit++ {
		if v&(1<<bit) == 0 {
			continue
		}
		n, ok := names[bit]
		if !ok {
			n = "UNKNOWN"
		}
		out = append(out, n)
	}
	return out
}
