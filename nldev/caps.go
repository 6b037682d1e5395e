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
func (c DeviceCaps) Names() []string {
	var names []string
	for bit := uint(0); bit < 64; bit++ {
		if c&(1<<bit) == 0 {
			continue
		}
		n, ok := deviceCapNames[bit]
		if !ok {
			n = "UNKNOWN"
		}
		names = append(names, n)
	}
	return names
}

// Has reports whether every bit of mask is set.
func (c DeviceCaps) Has(mask DeviceCaps) bool { return c&mask == mask }

// String joins Names with ", ", the form of iproute2's "caps: <...>".
func (c DeviceCaps) String() string { return strings.Join(c.Names(), ", ") }
