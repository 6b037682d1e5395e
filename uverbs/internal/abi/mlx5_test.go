package abi

import (
	"reflect"
	"testing"
)

// TestSizesDrivers checks the mlx5 and siw driver structs, and the core
// structs of the commands added with them, against sizeof and offsetof
// taken by compiling /usr/include/rdma/{mlx5-abi.h,siw-abi.h,
// ib_user_verbs.h} (Linux 6.1) with gcc on x86-64.
func TestSizesDrivers(t *testing.T) {
	for _, tc := range []struct {
		c       string
		v       any
		size    uintptr
		offsets map[string]uintptr
	}{
		{"mlx5_ib_alloc_ucontext_req_v2", Mlx5IbAllocUcontextReqV2{}, 32, map[string]uintptr{
			"Flags": 8, "CompMask": 12, "MaxCqeVersion": 16, "Reserved1": 18, "Reserved2": 20, "LibCaps": 24}},
		{"mlx5_ib_alloc_ucontext_resp", Mlx5IbAllocUcontextResp{}, 72, map[string]uintptr{
			"CacheLineSize": 12, "MaxSqDescSz": 16, "MaxSendWqebb": 20, "NumPorts": 32, "FlowActionFlags": 34,
			"CompMask": 36, "ResponseLength": 40, "CqeVersion": 44, "CmdsSuppUhw": 45, "EthMinInline": 46,
			"ClockInfoVersions": 47, "HcaCoreClockOffset": 48, "LogUarSize": 56, "NumUarsPerPage": 60,
			"NumDynBfregs": 64, "DumpFillMkey": 68}},
		{"mlx5_ib_alloc_pd_resp", Mlx5IbAllocPdResp{}, 4, nil},
		{"mlx5_ib_create_ah_resp", Mlx5IbCreateAhResp{}, 16, map[string]uintptr{"Dmac": 4}},
		// The create commands' driver data, every field (gcc offsetof).
		{"mlx5_ib_create_cq", Mlx5IbCreateCq{}, 32, map[string]uintptr{
			"BufAddr": 0, "DbAddr": 8, "CqeSize": 16, "CqeCompEn": 20, "CqeCompResFormat": 21, "Flags": 22,
			"UarPageIndex": 24, "Reserved0": 26, "Reserved1": 28}},
		{"mlx5_ib_create_cq_resp", Mlx5IbCreateCqResp{}, 8, map[string]uintptr{"Cqn": 0, "Reserved": 4}},
		{"mlx5_ib_create_srq", Mlx5IbCreateSrq{}, 32, map[string]uintptr{
			"BufAddr": 0, "DbAddr": 8, "Flags": 16, "Reserved0": 20, "Uidx": 24, "Reserved1": 28}},
		{"mlx5_ib_create_srq_resp", Mlx5IbCreateSrqResp{}, 8, map[string]uintptr{"Srqn": 0, "Reserved": 4}},
		{"mlx5_ib_create_qp_dci_streams", Mlx5IbCreateQpDciStreams{}, 2, map[string]uintptr{"LogNumErrored": 1}},
		{"mlx5_ib_create_qp", Mlx5IbCreateQp{}, 56, map[string]uintptr{
			"BufAddr": 0, "DbAddr": 8, "SqWqeCount": 16, "RqWqeCount": 20, "RqWqeShift": 24, "Flags": 28,
			"Uidx": 32, "BfregIndex": 36, "SqBufAddr": 40, "EceOptions": 48, "DciStreams": 52,
			"DciStreams.LogNumConcurent": 52, "DciStreams.LogNumErrored": 53, "Reserved": 54}},
		{"mlx5_ib_create_qp_resp", Mlx5IbCreateQpResp{}, 40, map[string]uintptr{
			"BfregIndex": 0, "EceOptions": 4, "CompMask": 8, "Tirn": 12, "Tisn": 16, "Rqn": 20, "Sqn": 24,
			"Reserved1": 28, "TirIcmAddr": 32}},
		{"siw_uresp_create_qp", SiwUrespCreateQp{}, 32, map[string]uintptr{"SqKey": 16, "RqKey": 24}},
		{"siw_uresp_create_srq", SiwUrespCreateSrq{}, 16, map[string]uintptr{"SrqKey": 8}},
		{"siw_ureq_reg_mr", SiwUreqRegMr{}, 8, map[string]uintptr{"Pad": 4}},
	} {
		typ := reflect.TypeOf(tc.v)
		if got := typ.Size(); got != tc.size {
			t.Errorf("%v (struct %s) is %d bytes, want %d", typ, tc.c, got, tc.size)
		}
		for path, want := range tc.offsets {
			if got := offset(t, typ, path); got != want {
				t.Errorf("%v.%s (struct %s) is at %d, want %d", typ, path, tc.c, got, want)
			}
		}
	}
	// The fallback request lengths are offsets in the v2 request.
	if got := offset(t, reflect.TypeOf(Mlx5IbAllocUcontextReqV2{}), "LibCaps"); got != Mlx5AllocUcontextReqLenNoLibCaps {
		t.Errorf("offsetof(lib_caps) %d", got)
	}
	if got := offset(t, reflect.TypeOf(Mlx5IbAllocUcontextReqV2{}), "MaxCqeVersion"); got != Mlx5AllocUcontextReqLenMin {
		t.Errorf("offsetof(max_cqe_version) %d", got)
	}
}

func TestSizesModify(t *testing.T) {
	for _, tc := range []struct {
		c       string
		v       any
		size    uintptr
		offsets map[string]uintptr
	}{
		{"ib_uverbs_resize_cq", ResizeCq{}, 16, map[string]uintptr{"CqHandle": 8, "Cqe": 12}},
		{"ib_uverbs_resize_cq_resp", ResizeCqResp{}, 8, nil},
		{"rxe_resize_cq_resp", RxeResizeCqResp{}, 16, nil},
		{"ib_uverbs_modify_srq", ModifySrq{}, 16, map[string]uintptr{"AttrMask": 4, "MaxWr": 8, "SrqLimit": 12}},
		{"rxe_modify_srq_cmd", RxeModifySrqCmd{}, 8, nil},
		{"ib_uverbs_rereg_mr", ReregMr{}, 48, map[string]uintptr{"MrHandle": 8, "Flags": 12, "Start": 16, "PdHandle": 40, "AccessFlags": 44}},
		{"ib_uverbs_rereg_mr_resp", ReregMrResp{}, 8, nil},
		{"ib_uverbs_qp_cap", QpCap{}, 20, map[string]uintptr{"MaxInlineData": 16}},
	} {
		typ := reflect.TypeOf(tc.v)
		if got := typ.Size(); got != tc.size {
			t.Errorf("%v (struct %s) is %d bytes, want %d", typ, tc.c, got, tc.size)
		}
		for path, want := range tc.offsets {
			if got := offset(t, typ, path); got != want {
				t.Errorf("%v.%s (struct %s) is at %d, want %d", typ, path, tc.c, got, want)
			}
		}
	}
}
