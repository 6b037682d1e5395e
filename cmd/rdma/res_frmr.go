package main

import "github.com/rdmastack/rdmastack/nldev"

// frmrKind is "rdma resource show frmr_pools" (iproute2 HEAD's
// rdma/res-frmr-pools.c): "dev NAME key K [ats .. access_flags ..
// vendor_key .. num_dma_blocks .. kernel_vendor_key ..] queue in_use
// max_in_use pinned", the key's fields only with -d. Every filter is a
// number, compared as a 32-bit value as iproute2 does.
var frmrKind = &resKind[nldev.FRMRPool]{
	name: "frmr_pools",
	info: func(x *nldev.FRMRPool) nldev.ResourceInfo {
		return nldev.ResourceInfo{DevIndex: x.DevIndex, DevName: x.DevName, Driver: x.Driver}
	},
	query: devQuery((*nldev.Client).FRMRPools, nil),
	fields: []resField[nldev.FRMRPool]{
		{"key", fmtStr, noFilter, func(x *nldev.FRMRPool) value {
			if x.Key == nil {
				return value{state: absent}
			}
			return str(x.Key.String())
		}},
		{"ats", detailed(fmtNum), numberFilter(1), frmrKeyField(func(k *nldev.FRMRPoolKey) uint64 { return uint64(b2u(k.ATS)) })},
		{"access_flags", detailed(fmtNum), numberFilter(2), frmrKeyField(func(k *nldev.FRMRPoolKey) uint64 { return uint64(k.AccessFlags) })},
		{"vendor_key", detailed(fmtNum), numberFilter(3), frmrKeyField(func(k *nldev.FRMRPoolKey) uint64 { return k.VendorKey })},
		{"num_dma_blocks", detailed(fmtNum), numberFilter(4), frmrKeyField(func(k *nldev.FRMRPoolKey) uint64 { return k.NumDMABlocks })},
		{"kernel_vendor_key", detailed(fmtNum), noFilter, func(x *nldev.FRMRPool) value {
			if x.Key == nil {
				return value{state: absent}
			}
			return optNum(x.KernelVendorKey)
		}},
		{"queue", fmtNum, numberFilter(5), func(x *nldev.FRMRPool) value { return optNum(x.QueueHandles) }},
		{"in_use", fmtNum, numberFilter(6), func(x *nldev.FRMRPool) value { return optNum(x.InUse) }},
		{"max_in_use", fmtNum, numberFilter(7), func(x *nldev.FRMRPool) value { return optNum(x.MaxInUse) }},
		{"pinned", fmtNum, numberFilter(8), func(x *nldev.FRMRPool) value { return optNum(x.PinnedHandles) }},
	},
}

// frmrKeyField gets a field of the pool's key: iproute2 applies the key's
// filters only to pools that have a key.
func frmrKeyField(get func(k *nldev.FRMRPoolKey) uint64) func(x *nldev.FRMRPool) value {
	return func(x *nldev.FRMRPool) value {
		if x.Key == nil {
			return value{state: exempt}
		}
		return value{n: get(x.Key)}
	}
}
