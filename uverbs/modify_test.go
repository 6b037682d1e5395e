package uverbs

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// modifyContext is a write()-interface context for driver whose fake
// kernel answers RESIZE_CQ with cqe 64 and a new mminfo (rxe), REREG_MR
// with new keys, and everything else with handle 7.
func modifyContext(t *testing.T, name string, driver ib.DriverID) (*Context, *fakeKernel) {
	return driverWriteContext(t, name, driver, func(w *abi.WriteCmd) error {
		switch w.Command {
		case abi.IB_USER_VERBS_CMD_RESIZE_CQ:
			binary.LittleEndian.PutUint32(w.Resp, 64)
			copy(w.DriverOut, enc(8, 0x5000, 4, 0x2000))
		case abi.IB_USER_VERBS_CMD_REREG_MR:
			copy(w.Resp, enc(4, 0x111, 4, 0x222))
		case abi.IB_USER_VERBS_CMD_QUERY_SRQ:
			copy(w.Resp, enc(4, 64, 4, 1, 4, 0))
		default:
			if len(w.Resp) >= 4 {
				binary.LittleEndian.PutUint32(w.Resp, 7)
			}
		}
		return nil
	})
}

// TestModifyEncoding checks RESIZE_CQ, MODIFY_SRQ and REREG_MR byte for
// byte against rdma/ib_user_verbs.h and rdma_user_rxe.h.
func TestModifyEncoding(t *testing.T) {
	littleEndian(t)
	c, k := modifyContext(t, "rxe0", ib.DriverRXE)
	k.writes = nil
	cq, err := c.CreateCQ(CQAttr{CQE: 16})
	if err != nil {
		t.Fatal(err)
	}
	k.writes = nil
	if err := cq.Resize(64); err != nil {
		t.Fatal(err)
	}
	// RESIZE_CQ 19: in (8+16)/4=6, out (8+16 rxe_resize_cq_resp)/4=6;
	// response, cq_handle 7, cqe 64.
	checkWrite(t, k, "resize cq", enc(cat(hdr(19, 6, 6), []uint64{8, respPtr, 4, 7, 4, 64})...))
	if cq.CQE() != 64 || string(cq.driver) != string(enc(8, 0x5000, 4, 0x2000, 4, 0)) {
		t.Fatalf("after resize: cqe %d, driver data %x", cq.CQE(), cq.driver)
	}

	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 16, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	k.writes = nil
	if err := srq.Modify(SRQAttr{MaxWR: 64, SRQLimit: 5}, SRQAttrMaxWR|SRQAttrLimit); err != nil {
		t.Fatal(err)
	}
	// MODIFY_SRQ 33: in (8+16+8)/4=8, out 0; srq_handle 7, attr_mask 3,
	// max_wr 64, srq_limit 5, then rxe_modify_srq_cmd.mmap_info_addr,
	// which points at memory of this process.
	got := k.writes[0]
	checkWrite(t, k, "modify srq", append(enc(cat(hdr(33, 8, 0), []uint64{4, 7, 4, 3, 4, 64, 4, 5})...), got[24:]...))
	if binary.LittleEndian.Uint64(got[24:]) == 0 {
		t.Fatal("mmap_info_addr is 0")
	}
	// A resize is followed by QUERY_SRQ for the granted size.
	checkWrite(t, k, "query srq", enc(cat(hdr(34, 6, 4), []uint64{8, respPtr, 4, 7, 4, 0})...))
	if srq.MaxWR() != 64 {
		t.Fatalf("max_wr %d", srq.MaxWR())
	}

	pd2, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	mr, err := pd.RegMR(make([]byte, 4096), AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	k.writes = nil
	if err := mr.Rereg(ReregPD|ReregAccess, pd2, nil, AccessLocalWrite|AccessRemoteRead); err != nil {
		t.Fatal(err)
	}
	// REREG_MR 11: in (8+48)/4=14, out 8/4=2; response, mr_handle 7,
	// flags PD|ACCESS, start, length, hca_va 0 (no translation change),
	// pd_handle 7, access_flags 5.
	checkWrite(t, k, "rereg mr", enc(cat(hdr(11, 14, 2), []uint64{8, respPtr, 4, 7, 4, 6, 8, 0, 8, 0, 8, 0, 4, 7, 4, 5})...))
	if mr.LKey() != 0x111 || mr.RKey() != 0x222 || mr.pd != pd2 {
		t.Fatalf("after rereg: lkey %#x rkey %#x", mr.LKey(), mr.RKey())
	}
	buf := make([]byte, 8192)
	if err := mr.Rereg(ReregTranslation, nil, buf, 0); err != nil {
		t.Fatal(err)
	}
	checkWrite(t, k, "rereg mr translation", enc(cat(hdr(11, 14, 2), []uint64{8, respPtr, 4, 7, 4, 1,
		8, uint64(mr.Addr()), 8, 8192, 8, uint64(mr.Addr()), 4, 0, 4, 0})...))
	if mr.Len() != 8192 {
		t.Fatalf("len %d", mr.Len())
	}

	// Bad arguments are refused before anything is sent.
	for name, err := range map[string]error{
		"resize to 0":         cq.Resize(0),
		"modify srq mask 0":   srq.Modify(SRQAttr{}, 0),
		"modify srq mask 8":   srq.Modify(SRQAttr{}, 8),
		"modify srq max_wr 0": srq.Modify(SRQAttr{}, SRQAttrMaxWR),
		"rereg flags 0":       mr.Rereg(0, nil, nil, 0),
		"rereg pd nil":        mr.Rereg(ReregPD, nil, nil, 0),
		"rereg empty buffer":  mr.Rereg(ReregTranslation, nil, nil, 0),
		"rereg unknown flag":  mr.Rereg(8, nil, nil, 0),
	} {
		if !errors.Is(err, unix.EINVAL) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(k.writes) != 0 {
		t.Fatalf("bad arguments sent %d writes", len(k.writes))
	}
	for _, cl := range []interface{ Close() error }{mr, srq, cq} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	k.writes = nil
	for name, err := range map[string]error{
		"resize closed cq":  cq.Resize(8),
		"modify closed srq": srq.Modify(SRQAttr{SRQLimit: 1}, SRQAttrLimit),
		"rereg closed mr":   mr.Rereg(ReregAccess, nil, nil, 0),
	} {
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(k.writes) != 0 {
		t.Fatalf("closed objects sent %d writes", len(k.writes))
	}
}

// TestModifyOtherDrivers: siw's MODIFY_SRQ carries no driver data, and
// its RESIZE_CQ (iWARP has none) is refused before anything is sent, as
// is mlx5's.
func TestModifyOtherDrivers(t *testing.T) {
	littleEndian(t)
	c, k := modifyContext(t, "siw0", ib.DriverSIW)
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 16, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(CQAttr{CQE: 16})
	if err != nil {
		t.Fatal(err)
	}
	k.writes = nil
	if err := srq.Modify(SRQAttr{SRQLimit: 2}, SRQAttrLimit); err != nil {
		t.Fatal(err)
	}
	checkWrite(t, k, "modify srq", enc(cat(hdr(33, 6, 0), []uint64{4, 7, 4, 2, 4, 0, 4, 2})...))
	k.writes = nil
	if err := cq.Resize(32); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "resizing a CQ") || len(k.writes) != 0 {
		t.Fatalf("siw resize: %v after %d writes", err, len(k.writes))
	}

	m, k2 := modifyContext(t, "mlx5_0", ib.DriverMLX5)
	k2.writes = nil
	mcq := &CQ{object: object{ctx: m, handle: 1}}
	if err := mcq.Resize(32); !errors.Is(err, ErrNotSupported) || len(k2.writes) != 0 {
		t.Fatalf("mlx5 resize: %v after %d writes", err, len(k2.writes))
	}
}
