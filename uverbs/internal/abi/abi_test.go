package abi

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

// offset returns the byte offset of a (dotted) field path in t.
func offset(t *testing.T, typ reflect.Type, path string) uintptr {
	t.Helper()
	var off uintptr
	for _, name := range strings.Split(path, ".") {
		f, ok := typ.FieldByName(name)
		if !ok {
			t.Fatalf("%v has no field %s", typ, name)
		}
		off += f.Offset
		typ = f.Type
	}
	return off
}

// TestSizes checks every struct against sizeof and offsetof values taken
// by compiling the C headers in /usr/include/rdma (Linux 6.1) with gcc on
// x86-64; the uapi lays out the same on every architecture.
func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		c       string
		v       any
		size    uintptr
		offsets map[string]uintptr // Go field path -> C offsetof
	}{
		{"ib_uverbs_ioctl_hdr", IoctlHdr{}, 24, map[string]uintptr{"Reserved1": 8, "DriverID": 16}},
		{"ib_uverbs_attr", Attr{}, 16, map[string]uintptr{"AttrData": 6, "Data": 8}},
		{"ib_uverbs_cmd_hdr", CmdHdr{}, 8, nil},
		{"ib_uverbs_ex_cmd_hdr", ExCmdHdr{}, 16, map[string]uintptr{"ProviderInWords": 8}},
		{"ib_uverbs_get_context", GetContext{}, 8, nil},
		{"ib_uverbs_get_context_resp", GetContextResp{}, 8, nil},
		{"ib_uverbs_query_device", QueryDevice{}, 8, nil},
		{"ib_uverbs_query_device_resp", QueryDeviceResp{}, 176, map[string]uintptr{"VendorID": 40, "MaxSrqSge": 164, "MaxPkeys": 168, "PhysPortCnt": 171}},
		{"ib_uverbs_ex_query_device", ExQueryDevice{}, 8, nil},
		{"ib_uverbs_ex_query_device_resp", ExQueryDeviceResp{}, 304, map[string]uintptr{
			"CompMask": 176, "OdpCaps": 184, "TimestampMask": 208, "DeviceCapFlagsEx": 224, "RssCaps": 232,
			"MaxWqTypeRq": 248, "TmCaps": 256, "CqModerationCaps": 280, "MaxDmSize": 288, "XrcOdpCaps": 296}},
		{"ib_uverbs_odp_caps", OdpCaps{}, 24, nil},
		{"ib_uverbs_rss_caps", RssCaps{}, 16, nil},
		{"ib_uverbs_tm_caps", TmCaps{}, 24, nil},
		{"ib_uverbs_cq_moderation_caps", CqModerationCaps{}, 8, nil},
		{"ib_uverbs_query_port", QueryPort{}, 16, map[string]uintptr{"PortNum": 8}},
		{"ib_uverbs_query_port_resp", QueryPortResp{}, 40, map[string]uintptr{"PkeyTblLen": 20, "State": 26, "LinkLayer": 37, "Flags": 38}},
		// active_speed_ex is not in 6.1's header: it sits at offsetof(reserved)+2.
		{"ib_uverbs_query_port_resp_ex", QueryPortRespEx{}, 48, map[string]uintptr{"PortCapFlags2": 40, "Reserved": 42, "ActiveSpeedEx": 44}},
		{"ib_uverbs_gid_entry", GidEntry{}, 32, map[string]uintptr{"GidIndex": 16, "NetdevIfindex": 28}},
		{"ib_uverbs_alloc_pd", AllocPd{}, 8, nil},
		{"ib_uverbs_alloc_pd_resp", AllocPdResp{}, 4, nil},
		{"ib_uverbs_dealloc_pd", DeallocPd{}, 4, nil},
		{"ib_uverbs_alloc_mw", AllocMw{}, 16, map[string]uintptr{"PdHandle": 8, "MwType": 12}},
		{"ib_uverbs_alloc_mw_resp", AllocMwResp{}, 8, map[string]uintptr{"Rkey": 4}},
		{"ib_uverbs_dealloc_mw", DeallocMw{}, 4, nil},
		{"ib_uverbs_reg_mr", RegMr{}, 40, map[string]uintptr{"PdHandle": 32, "AccessFlags": 36}},
		{"ib_uverbs_reg_mr_resp", RegMrResp{}, 12, nil},
		{"ib_uverbs_dereg_mr", DeregMr{}, 4, nil},
		{"ib_uverbs_create_comp_channel", CreateCompChannel{}, 8, nil},
		{"ib_uverbs_create_comp_channel_resp", CreateCompChannelResp{}, 4, nil},
		{"ib_uverbs_create_cq", CreateCq{}, 32, map[string]uintptr{"CompChannel": 24}},
		{"ib_uverbs_create_cq_resp", CreateCqResp{}, 8, nil},
		{"ib_uverbs_destroy_cq", DestroyCq{}, 16, nil},
		{"ib_uverbs_destroy_cq_resp", DestroyCqResp{}, 8, nil},
		{"ib_uverbs_global_route", GlobalRoute{}, 24, map[string]uintptr{"FlowLabel": 16, "SgidIndex": 20}},
		{"ib_uverbs_ah_attr", AhAttr{}, 32, map[string]uintptr{"Dlid": 24, "PortNum": 30}},
		{"ib_uverbs_create_qp", CreateQp{}, 56, map[string]uintptr{"PdHandle": 16, "MaxInlineData": 48, "SqSigAll": 52, "QpType": 53}},
		{"ib_uverbs_create_qp_resp", CreateQpResp{}, 32, map[string]uintptr{"Qpn": 4}},
		{"ib_uverbs_qp_dest", QpDest{}, 32, map[string]uintptr{"Dlid": 20, "SgidIndex": 24, "PortNum": 31}},
		{"ib_uverbs_query_qp", QueryQp{}, 16, nil},
		{"ib_uverbs_query_qp_resp", QueryQpResp{}, 128, map[string]uintptr{"MaxSendWr": 64, "PkeyIndex": 104, "QpState": 108, "SqSigAll": 122}},
		{"ib_uverbs_modify_qp", ModifyQp{}, 112, map[string]uintptr{"QpHandle": 64, "AttrMask": 68, "PkeyIndex": 92, "QpState": 96, "AltTimeout": 109}},
		{"ib_uverbs_destroy_qp", DestroyQp{}, 16, nil},
		{"ib_uverbs_destroy_qp_resp", DestroyQpResp{}, 4, nil},
		{"ib_uverbs_create_srq", CreateSrq{}, 32, map[string]uintptr{"SrqLimit": 28}},
		{"ib_uverbs_create_srq_resp", CreateSrqResp{}, 16, nil},
		{"ib_uverbs_query_srq", QuerySrq{}, 16, nil},
		{"ib_uverbs_query_srq_resp", QuerySrqResp{}, 16, nil},
		{"ib_uverbs_destroy_srq", DestroySrq{}, 16, nil},
		{"ib_uverbs_destroy_srq_resp", DestroySrqResp{}, 4, nil},
		{"ib_uverbs_create_ah", CreateAh{}, 56, map[string]uintptr{"PdHandle": 16, "Attr": 24}},
		{"ib_uverbs_create_ah_resp", CreateAhResp{}, 4, nil},
		{"ib_uverbs_destroy_ah", DestroyAh{}, 4, nil},
		{"ib_uverbs_attach_mcast", AttachMcast{}, 24, map[string]uintptr{"QpHandle": 16, "Mlid": 20}},
		{"ib_uverbs_detach_mcast", DetachMcast{}, 24, map[string]uintptr{"QpHandle": 16, "Mlid": 20}},
		{"ib_uverbs_async_event_desc", AsyncEventDesc{}, 16, map[string]uintptr{"EventType": 8}},
		{"ib_uverbs_comp_event_desc", CompEventDesc{}, 8, nil},
		{"mminfo", MmInfo{}, 16, map[string]uintptr{"Size": 8}},
		{"rxe_create_cq_resp", RxeCreateCqResp{}, 16, nil},
		{"rxe_create_qp_resp", RxeCreateQpResp{}, 32, map[string]uintptr{"SqMi": 16}},
		{"rxe_create_srq_resp", RxeCreateSrqResp{}, 24, map[string]uintptr{"SrqNum": 16}},
		{"rxe_create_ah_resp", RxeCreateAhResp{}, 8, nil},
		{"siw_uresp_alloc_ctx", SiwUrespAllocCtx{}, 8, nil},
		{"siw_uresp_create_cq", SiwUrespCreateCq{}, 16, nil},
		{"siw_uresp_create_qp", SiwUrespCreateQp{}, 32, map[string]uintptr{"SqKey": 16}},
		{"siw_uresp_create_srq", SiwUrespCreateSrq{}, 16, nil},
		{"siw_ureq_reg_mr", SiwUreqRegMr{}, 8, nil},
		{"siw_uresp_reg_mr", SiwUrespRegMr{}, 8, nil},
		{"siw_sge", SiwSge{}, 16, map[string]uintptr{"Lkey": 12}},
		{"siw_sqe", SiwSqe{}, 120, map[string]uintptr{"Flags": 8, "NumSge": 10, "Opcode": 11, "Rkey": 12, "Raddr": 16, "Sge": 24}},
		{"siw_rqe", SiwRqe{}, 112, map[string]uintptr{"Flags": 8, "NumSge": 10, "Sge": 16}},
		{"siw_cqe", SiwCqe{}, 32, map[string]uintptr{"Flags": 8, "Opcode": 9, "Status": 10, "Bytes": 12, "Imm": 16, "QpID": 24}},
		{"siw_cq_ctrl", SiwCqCtrl{}, 8, nil},
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

func TestDecodeShort(t *testing.T) {
	r := kabi.Decode[GetContextResp]([]byte{7, 0, 0, 0})
	if r.AsyncFD != 7 || r.NumCompVectors != 0 {
		t.Fatalf("Decode of a short buffer = %+v", r)
	}
	if kabi.Sizeof[QueryDeviceResp]() != 176 {
		t.Fatalf("kabi.Sizeof[QueryDeviceResp] = %d", kabi.Sizeof[QueryDeviceResp]())
	}
}
