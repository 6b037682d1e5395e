package uverbs

import (
	"encoding/binary"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// TestSIWWriteEncoding checks siw's driver data (rdma/siw-abi.h) for every
// command that carries it, byte for byte over write(). siw is not in the
// test VM (Debian's kernels do not build it), so this is its only test:
//   - GET_CONTEXT: the kernel refuses (EINVAL) an out-buffer shorter than
//     struct siw_uresp_alloc_ctx (8 bytes).
//   - CREATE_CQ, CREATE_QP, CREATE_SRQ: the same for siw_uresp_create_cq
//     (16), siw_uresp_create_qp (32) and siw_uresp_create_srq (16).
//   - REG_MR: siw_reg_user_mr refuses a request without struct
//     siw_ureq_reg_mr (8 bytes, stag_key 0 as libsiw sends) or without
//     room for struct siw_uresp_reg_mr (8).
//
// ALLOC_PD, DEALLOC_PD, QUERY_*, MODIFY_QP and the destroys take none;
// siw has no AH verbs.
func TestSIWWriteEncoding(t *testing.T) {
	littleEndian(t)
	c, k := driverWriteContext(t, "siw0", ib.DriverSIW, func(w *abi.WriteCmd) error {
		if len(w.Resp) >= 4 {
			binary.LittleEndian.PutUint32(w.Resp, 7)
		}
		if w.Command == abi.IB_USER_VERBS_CMD_REG_MR {
			copy(w.Resp, enc(4, 7, 4, 0x5500, 4, 0x5500))
			copy(w.DriverOut, enc(4, 0x5500, 4, 0)) // stag
		}
		return nil
	})
	// GET_CONTEXT: in (8+8)/4=4, out (8+8)/4=4.
	checkWrite(t, k, "get context", enc(cat(hdr(0, 4, 4), []uint64{8, respPtr})...))

	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	checkWrite(t, k, "alloc pd", enc(cat(hdr(3, 4, 1), []uint64{8, respPtr})...))
	if pd.PDN() != 0 {
		t.Fatalf("siw pdn %d", pd.PDN())
	}

	buf := make([]byte, 8192)
	mr, err := pd.RegMR(buf, AccessLocalWrite|AccessRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	// REG_MR: in (8+40+8)/4=14, out (12+8)/4=5; the core request, then
	// siw_ureq_reg_mr: stag_key 0, reserved[3], pad.
	checkWrite(t, k, "reg mr", enc(cat(hdr(9, 14, 5), []uint64{8, respPtr, 8, uint64(mr.Addr()), 8, 8192, 8, uint64(mr.Addr()),
		4, 7, 4, 3}, []uint64{1, 0, 3, 0, 4, 0})...))
	if mr.LKey() != 0x5500 || mr.RKey() != 0x5500 {
		t.Fatalf("keys %#x %#x", mr.LKey(), mr.RKey())
	}

	cq, err := c.CreateCQ(CQAttr{CQE: 8})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_CQ: in 10, out (8+16)/4=6.
	checkWrite(t, k, "create cq", enc(cat(hdr(18, 10, 6), []uint64{8, respPtr, 8, 1, 4, 8, 4, 0, 4, 0xffffffff, 4, 0})...))

	srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 8, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_SRQ: in 10, out (16+16)/4=8.
	checkWrite(t, k, "create srq", enc(cat(hdr(32, 10, 8), []uint64{8, respPtr, 8, 2, 4, 7, 4, 8, 4, 1, 4, 0})...))

	qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: QPCap{MaxSendWR: 2, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// CREATE_QP: in 16, out (32+32)/4=16; RC 2, no SRQ.
	checkWrite(t, k, "create qp", enc(cat(hdr(24, 16, 16), []uint64{8, respPtr, 8, 3, 4, 7, 4, 7, 4, 7, 4, 0,
		4, 2, 4, 2, 4, 1, 4, 1, 4, 0, 1, 0, 1, 2, 1, 0, 1, 0})...))

	for _, cl := range []interface{ Close() error }{qp, srq, cq, mr, pd} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The destroys carry no driver data (their encodings are those of
	// TestEveryWriteCommandEncoding).
	for _, want := range [][]byte{
		enc(cat(hdr(27, 6, 1), []uint64{8, respPtr, 4, 7, 4, 0})...),
		enc(cat(hdr(35, 6, 1), []uint64{8, respPtr, 4, 7, 4, 0})...),
		enc(cat(hdr(20, 6, 2), []uint64{8, respPtr, 4, 7, 4, 0})...),
		enc(cat(hdr(13, 3, 0), []uint64{4, 7})...),
		enc(cat(hdr(4, 3, 0), []uint64{4, 7})...),
	} {
		checkWrite(t, k, "destroy", want)
	}
}
