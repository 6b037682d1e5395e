package main

import (
	"github.com/rdmastack/rdmastack/uverbs"
)

// capName is one named bit of a capability list.
type capName struct {
	bit  uint64
	name string
}

// deviceCaps are the device_cap_flags ibv_devinfo names, in its order.
var deviceCaps = []capName{
	{1 << 0, "RESIZE_MAX_WR"}, {1 << 1, "BAD_PKEY_CNTR"}, {1 << 2, "BAD_QKEY_CNTR"}, {1 << 3, "RAW_MULTI"},
	{1 << 4, "AUTO_PATH_MIG"}, {1 << 5, "CHANGE_PHY_PORT"}, {1 << 6, "UD_AV_PORT_ENFORCE"},
	{1 << 7, "CURR_QP_STATE_MOD"}, {1 << 8, "SHUTDOWN_PORT"}, {1 << 9, "INIT_TYPE"},
	{1 << 10, "PORT_ACTIVE_EVENT"}, {1 << 11, "SYS_IMAGE_GUID"}, {1 << 12, "RC_RNR_NAK_GEN"},
	{1 << 13, "SRQ_RESIZE"}, {1 << 14, "N_NOTIFY_CQ"}, {1 << 17, "MEM_WINDOW"}, {1 << 18, "UD_IP_CSUM"},
	{1 << 20, "XRC"}, {1 << 21, "MEM_MGT_EXTENSIONS"}, {1 << 23, "MEM_WINDOW_TYPE_2A"},
	{1 << 24, "MEM_WINDOW_TYPE_2B"}, {1 << 25, "RC_IP_CSUM"}, {1 << 26, "RAW_IP_CSUM"},
	{1 << 29, "MANAGED_FLOW_STEERING"},
}

var odpTransportCaps = []capName{{1 << 0, "SUPPORT_SEND"}, {1 << 1, "SUPPORT_RECV"}, {1 << 2, "SUPPORT_WRITE"},
	{1 << 3, "SUPPORT_READ"}, {1 << 4, "SUPPORT_ATOMIC"}, {1 << 5, "SUPPORT_SRQ"}, {1 << 6, "SUPPORT_FLUSH"},
	{1 << 7, "SUPPORT_ATOMIC_WRITE"}}

// printCaps prints one line per known bit, then the unknown rest.
func printCaps(p func(string, ...any), v uint64, names []capName, hexWidth64 bool) {
	known := uint64(0)
	for _, c := range names {
		known |= c.bit
		if v&c.bit != 0 {
			p("\t\t\t\t\t%s\n", c.name)
		}
	}
	if v&^known != 0 {
		p("\t\t\t\t\tUnknown flags: 0x%X\n", v&^known)
	}
}

// printVerbose prints the -v device attributes.
func printVerbose(p func(string, ...any), a *uverbs.DeviceAttr, ctx *uverbs.Context) {
	p("\tmax_mr_size:\t\t\t0x%x\n", a.MaxMRSize)
	p("\tpage_size_cap:\t\t\t0x%x\n", a.PageSizeCap)
	p("\tmax_qp:\t\t\t\t%d\n", int32(a.MaxQP))
	p("\tmax_qp_wr:\t\t\t%d\n", int32(a.MaxQPWR))
	p("\tdevice_cap_flags:\t\t0x%08x\n", uint32(a.Caps))
	printCaps(p, uint64(uint32(a.Caps)), deviceCaps, false)
	p("\tmax_sge:\t\t\t%d\n", int32(a.MaxSGE))
	p("\tmax_sge_rd:\t\t\t%d\n", int32(a.MaxSGERd))
	p("\tmax_cq:\t\t\t\t%d\n", int32(a.MaxCQ))
	p("\tmax_cqe:\t\t\t%d\n", int32(a.MaxCQE))
	p("\tmax_mr:\t\t\t\t%d\n", int32(a.MaxMR))
	p("\tmax_pd:\t\t\t\t%d\n", int32(a.MaxPD))
	p("\tmax_qp_rd_atom:\t\t\t%d\n", int32(a.MaxQPRdAtom))
	p("\tmax_ee_rd_atom:\t\t\t%d\n", int32(a.MaxEERdAtom))
	p("\tmax_res_rd_atom:\t\t%d\n", int32(a.MaxResRdAtom))
	p("\tmax_qp_init_rd_atom:\t\t%d\n", int32(a.MaxQPInitRdAtom))
	p("\tmax_ee_init_rd_atom:\t\t%d\n", int32(a.MaxEEInitRdAtom))
	p("\tatomic_cap:\t\t\t%s (%d)\n", a.AtomicCap, a.AtomicCap)
	p("\tmax_ee:\t\t\t\t%d\n", int32(a.MaxEE))
	p("\tmax_rdd:\t\t\t%d\n", int32(a.MaxRDD))
	p("\tmax_mw:\t\t\t\t%d\n", int32(a.MaxMW))
	p("\tmax_raw_ipv6_qp:\t\t%d\n", int32(a.MaxRawIPv6QP))
	p("\tmax_raw_ethy_qp:\t\t%d\n", int32(a.MaxRawEthyQP))
	p("\tmax_mcast_grp:\t\t\t%d\n", int32(a.MaxMcastGrp))
	p("\tmax_mcast_qp_attach:\t\t%d\n", int32(a.MaxMcastQPAttach))
	p("\tmax_total_mcast_qp_attach:\t%d\n", int32(a.MaxTotalMcastQPAttach))
	p("\tmax_ah:\t\t\t\t%d\n", int32(a.MaxAH))
	p("\tmax_fmr:\t\t\t%d\n", int32(a.MaxFMR))
	if a.MaxFMR != 0 {
		p("\tmax_map_per_fmr:\t\t%d\n", int32(a.MaxMapPerFMR))
	}
	p("\tmax_srq:\t\t\t%d\n", int32(a.MaxSRQ))
	if a.MaxSRQ != 0 {
		p("\tmax_srq_wr:\t\t\t%d\n", int32(a.MaxSRQWR))
		p("\tmax_srq_sge:\t\t\t%d\n", int32(a.MaxSRQSGE))
	}
	p("\tmax_pkeys:\t\t\t%d\n", a.MaxPKeys)
	p("\tlocal_ca_ack_delay:\t\t%d\n", a.LocalCAAckDelay)

	p("\tgeneral_odp_caps:\n")
	printCaps(p, uint64(a.ODP.General), []capName{{1, "ODP_SUPPORT"}, {2, "ODP_SUPPORT_IMPLICIT"}}, true)
	for _, t := range []struct {
		name string
		caps uverbs.ODPTransportCaps
	}{{"rc", a.ODP.RC}, {"uc", a.ODP.UC}, {"ud", a.ODP.UD}, {"xrc", a.ODP.XRC}} {
		p("\t%s_odp_caps:\n", t.name)
		if t.caps == 0 {
			p("\t\t\t\t\tNO SUPPORT\n")
		} else {
			printCaps(p, uint64(t.caps), odpTransportCaps, false)
		}
	}
	if a.CompletionTimestampMask != 0 {
		p("\tcompletion timestamp_mask:\t\t\t0x%016x\n", a.CompletionTimestampMask)
	} else {
		p("\tcompletion_timestamp_mask not supported\n")
	}
	if a.HCACoreClock != 0 {
		p("\thca_core_clock:\t\t\t%dkHZ\n", a.HCACoreClock)
	} else {
		p("\tcore clock not supported\n")
	}
	if a.RawPacketCaps != 0 {
		p("\traw packet caps:\n")
		for _, c := range []capName{{1, "C-VLAN stripping offload"}, {2, "Scatter FCS offload"}, {4, "IP csum offload"}, {8, "Delay drop"}} {
			if uint64(a.RawPacketCaps)&c.bit != 0 {
				p("\t\t\t\t\t%s\n", c.name)
			}
		}
	}
	p("\tdevice_cap_flags_ex:\t\t0x%X\n", uint64(a.CapsEx))
	printCaps(p, uint64(a.CapsEx)&0xffffffff00000000,
		[]capName{{1 << 34, "RAW_SCATTER_FCS"}, {1 << 36, "PCI_WRITE_END_PADDING"}, {1 << 41, "CC_DMA_BOUNCE"}}, true)
	// TSO and packet pacing come from providers' driver data (mlx5);
	// the kernel's generic response has none, so they print as zero.
	p("\ttso_caps:\n")
	p("\t\tmax_tso:\t\t\t0\n")
	p("\trss_caps:\n")
	p("\t\tmax_rwq_indirection_tables:\t\t\t%d\n", a.RSS.MaxRWQIndirectionTables)
	p("\t\tmax_rwq_indirection_table_size:\t\t\t%d\n", a.RSS.MaxRWQIndirectionTableSize)
	p("\t\trx_hash_function:\t\t\t\t0x0\n")
	p("\t\trx_hash_fields_mask:\t\t\t\t0x0\n")
	if a.RSS.SupportedQPTypes != 0 {
		printQPTypes(p, a.RSS.SupportedQPTypes, false)
	}
	p("\tmax_wq_type_rq:\t\t\t%d\n", a.MaxWQTypeRQ)
	p("\tpacket_pacing_caps:\n")
	p("\t\tqp_rate_limit_min:\t0kbps\n")
	p("\t\tqp_rate_limit_max:\t0kbps\n")
	if a.TM.MaxNumTags != 0 {
		p("\tmax_rndv_hdr_size:\t\t%d\n", a.TM.MaxRndvHdrSize)
		p("\tmax_num_tags:\t\t\t%d\n", a.TM.MaxNumTags)
		p("\tmax_ops:\t\t\t%d\n", a.TM.MaxOps)
		p("\tmax_sge:\t\t\t%d\n", a.TM.MaxSGE)
		p("\tflags:\n")
		if a.TM.Flags&1 != 0 {
			p("\t\t\t\t\tIBV_TM_CAP_RC\n")
		}
	} else {
		p("\ttag matching not supported\n")
	}
	if a.CQModeration.MaxCount != 0 && a.CQModeration.MaxPeriod != 0 {
		p("\n\tcq moderation caps:\n")
		p("\t\tmax_cq_count:\t%d\n", a.CQModeration.MaxCount)
		p("\t\tmax_cq_period:\t%d us\n\n", a.CQModeration.MaxPeriod)
	}
	if a.MaxDMSize != 0 {
		p("\tmaximum available device memory:\t%dBytes\n\n", a.MaxDMSize)
	}
	p("\tnum_comp_vectors:\t\t%d\n", ctx.NumCompVectors())
}

// printQPTypes prints a supported_qpts mask (bit n: QP type n).
func printQPTypes(p func(string, ...any), v uint32, rc bool) {
	p("\t\tsupported_qp:\n")
	const raw, ud, rcq = 1 << 8, 1 << 4, 1 << 2
	if v&raw != 0 {
		p("\t\t\t\t\tSUPPORT_RAW_PACKET\n")
	}
	if v&ud != 0 {
		p("\t\t\t\t\tSUPPORT_UD\n")
	}
	known := uint32(raw | ud)
	if rc {
		known |= rcq
		if v&rcq != 0 {
			p("\t\t\t\t\tSUPPORT_RC\n")
		}
	}
	if v&^known != 0 {
		p("\t\t\t\t\tUnknown flags: 0x%X\n", v&^known)
	}
}
