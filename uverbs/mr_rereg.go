package uverbs

import (
	"fmt"
	"unsafe"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// ReregFlags selects what MR.Rereg changes (enum ib_mr_rereg_flags;
// libibverbs' IBV_REREG_MR_CHANGE_*).
type ReregFlags uint32

// Re-registration flags.
const (
	ReregTranslation ReregFlags = abi.IB_MR_REREG_TRANS  // cover a new buffer
	ReregPD          ReregFlags = abi.IB_MR_REREG_PD     // move to another PD
	ReregAccess      ReregFlags = abi.IB_MR_REREG_ACCESS // change the access flags
)

// String lists the flags.
func (f ReregFlags) String() string {
	return flagString(uint64(f), []flag{{1 << 0, "TRANSLATION"}, {1 << 1, "PD"}, {1 << 2, "ACCESS"}})
}

// Rereg re-registers the region in place (REREG_MR), keeping its handle:
// with ReregTranslation it covers buf (the same rules as RegMR), with
// ReregPD it moves to pd, with ReregAccess it gets access; arguments for
// flags not given are ignored. LKey and RKey report the keys afterwards,
// which the driver may change. What a driver supports varies: rxe does PD
// and access changes, not translation, and only on newer kernels (6.12
// has it; Debian's 6.1 has no rxe rereg at all); siw has none. An
// unsupported change gives an error matching ErrNotSupported and leaves
// the MR as it was. Rereg must not run
// concurrently with other uses of the MR.
func (mr *MR) Rereg(flags ReregFlags, pd *PD, buf []byte, access Access) error {
	c := mr.ctx
	op := fmt.Sprintf("rereg mr %d (%v)", mr.handle, flags)
	if flags == 0 || flags&^(ReregTranslation|ReregPD|ReregAccess) != 0 {
		return invalid(c.dev.Name, op, "flags %#x", uint32(flags))
	}
	if flags&ReregTranslation != 0 && len(buf) == 0 {
		return invalid(c.dev.Name, op, "empty buffer")
	}
	if flags&ReregPD != 0 {
		if pd == nil || pd.ctx != c {
			return invalid(c.dev.Name, op, "no PD of this context")
		}
		// In objectRank order: the PD, then the MR.
		done, err := pd.use(op)
		if err != nil {
			return err
		}
		defer done()
	}
	done, err := mr.useExclusive(op)
	if err != nil {
		return err
	}
	defer done()
	req := abi.ReregMr{MrHandle: mr.handle, Flags: uint32(flags)}
	var addr uintptr
	if flags&ReregTranslation != 0 {
		addr = uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
		req.Start, req.Length, req.HcaVa = uint64(addr), uint64(len(buf)), uint64(addr)
	}
	if flags&ReregPD != 0 {
		req.PdHandle = pd.handle
	}
	if flags&ReregAccess != 0 {
		req.AccessFlags = uint32(access)
	}
	var resp abi.ReregMrResp
	if err := c.write(op, abi.CmdReregMr.Build(&req, &resp, nil, nil)); err != nil {
		return err
	}
	mr.lkey, mr.rkey = resp.Lkey, resp.Rkey
	if flags&ReregTranslation != 0 {
		mr.addr, mr.length = addr, len(buf)
	}
	if flags&ReregPD != 0 {
		mr.pd = pd
	}
	return nil
}
