package abi

import (
	"reflect"
	"testing"
)

// TestDataPathSizes checks the data-path structs against sizeof and
// offsetof from gcc over /usr/include/rdma (Linux 6.1), x86-64.
func TestDataPathSizes(t *testing.T) {
	for _, tc := range []struct {
		c       string
		v       any
		size    uintptr
		offsets map[string]uintptr
	}{
		{"ib_uverbs_post_send", PostSend{}, 24, map[string]uintptr{"QpHandle": 8, "WqeSize": 20}},
		{"ib_uverbs_post_send_resp", PostSendResp{}, 4, nil},
		{"ib_uverbs_req_notify_cq", ReqNotifyCq{}, 8, nil},
		{"ib_uverbs_wc", UverbsWc{}, 48, map[string]uintptr{"Ex": 24, "WcFlags": 36, "PkeyIndex": 40, "Sl": 44, "PortNum": 46}},
		{"rxe_queue_buf", RxeQueueBuf{}, 384, map[string]uintptr{"ProducerIndex": 128, "ConsumerIndex": 256}},
		{"rxe_sge", RxeSge{}, 16, nil},
		{"rxe_dma_info", RxeDmaInfo{}, 24, nil},
		{"rxe_send_wr", RxeSendWr{}, 144, map[string]uintptr{"Opcode": 12, "Ex": 20, "Wr": 24}},
		{"rxe_send_wqe", RxeSendWqe{}, 208, map[string]uintptr{"Iova": 152, "Ssn": 176, "Dma": 184}},
		{"rxe_recv_wqe", RxeRecvWqe{}, 40, map[string]uintptr{"Dma": 16}},
	} {
		typ := reflect.TypeOf(tc.v)
		if typ.Size() != tc.size {
			t.Errorf("%s: size %d, C has %d", tc.c, typ.Size(), tc.size)
		}
		for path, want := range tc.offsets {
			if got := offset(t, typ, path); got != want {
				t.Errorf("%s.%s: offset %d, C has %d", tc.c, path, got, want)
			}
		}
	}
	// rxe_send_wr's union members, from offsetof(struct rxe_send_wr, wr.*) - 24.
	for name, got := range map[string]uintptr{"wr.ud.ah_num": RxeWrUDAhNum, "wr.atomic.rkey": RxeWrAtomicRkey} {
		want := map[string]uintptr{"wr.ud.ah_num": 36 - 24, "wr.atomic.rkey": 24}[name]
		if got != want {
			t.Errorf("%s: %d, C has %d", name, got, want)
		}
	}
}
