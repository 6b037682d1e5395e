package main

import (
	"github.com/rdmastack/rdmastack/uverbs"
)

// printCaps prints one line per named capability, then the unnamed rest.
func printCaps(p func(string, ...any), names []string, unknown uint64) {
	for _, n := range names {
		p("\t\t\t\t\t%s\n", n)
	}
	if unknown != 0 {
		p("\t\t\t\t\tUnknown flags: 0x%X\n", unknown)
	}
}

// rawPacketText is how ibv_devinfo describes each raw packet capability.
var rawPacketText = []struct {
	cap  uverbs.RawPacketCaps
	text string
}{
	{uverbs.RawPacketCVLANStripping, "C-VLAN stripping offload"}, {uverbs.RawPacketScatterFCS, "Scatter FCS offload"},
	{uverbs.RawPacketIPCsum, "IP csum offload"}, {uverbs.RawPacketDelayDrop, "Delay drop"},
}

// printVerbose prints the -v device attributes.
func printVerbose(p func(string, ...any), a *uverbs.DeviceAttr, ctx *uverbs.Context) {
	p("\tmax_mr_size:\t\t\t0x%x\n", a.MaxMRSize)
	p("\tpage_size_cap:\t\t\t0x%x\n", a.PageSizeCap)
	p("\tmax_qp:\t\t\t\t%d\n", int32(a.MaxQP))
	p("\tmax_qp_wr:\t\t\t%d\n", int32(a.MaxQPWR))
	p("\tdevice_cap_flags:\t\t0x%08x\n", uint32(a.Caps))
	// device_cap_flags is the low half; the rest prints under _ex.
	low := a.Caps & 0xffffffff
	printCaps(p, low.Names(), uint64(low.Unknown()))
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
	printCaps(p, a.ODP.General.Names(), uint64(a.ODP.General.Unknown()))
	for _, t := range []struct {
		name string
		caps uverbs.ODPTransportCaps
	}{{"rc", a.ODP.RC}, {"uc", a.ODP.UC}, {"ud", a.ODP.UD}, {"xrc", a.ODP.XRC}} {
		p("\t%s_odp_caps:\n", t.name)
		if t.caps == 0 {
			p("\t\t\t\t\tNO SUPPORT\n")
		} else {
			printCaps(p, t.caps.Names(), uint64(t.caps.Unknown()))
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
		for _, c := range rawPacketText {
			if a.RawPacketCaps&c.cap != 0 {
				p("\t\t\t\t\t%s\n", c.text)
			}
		}
	}
	p("\tdevice_cap_flags_ex:\t\t0x%X\n", uint64(a.CapsEx))
	high := a.CapsEx &^ 0xffffffff
	printCaps(p, high.Names(), uint64(high.Unknown()))
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
