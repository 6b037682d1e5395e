package uverbs

import (
	"fmt"
	"unsafe"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// Access is a memory access permission set (enum ib_uverbs_access_flags).
type Access uint32

// Access flags.
const (
	AccessLocalWrite   Access = 1 << 0 // IB_UVERBS_ACCESS_LOCAL_WRITE
	AccessRemoteWrite  Access = 1 << 1 // IB_UVERBS_ACCESS_REMOTE_WRITE
	AccessRemoteRead   Access = 1 << 2 // IB_UVERBS_ACCESS_REMOTE_READ
	AccessRemoteAtomic Access = 1 << 3 // IB_UVERBS_ACCESS_REMOTE_ATOMIC
	AccessMWBind       Access = 1 << 4 // IB_UVERBS_ACCESS_MW_BIND
	AccessZeroBased    Access = 1 << 5 // IB_UVERBS_ACCESS_ZERO_BASED
	AccessOnDemand     Access = 1 << 6 // IB_UVERBS_ACCESS_ON_DEMAND
	AccessHugeTLB      Access = 1 << 7 // IB_UVERBS_ACCESS_HUGETLB
)

// String lists the flags.
func (a Access) String() string {
	return flagString(uint64(a), []flag{{1 << 0, "LOCAL_WRITE"}, {1 << 1, "REMOTE_WRITE"}, {1 << 2, "REMOTE_READ"},
		{1 << 3, "REMOTE_ATOMIC"}, {1 << 4, "MW_BIND"}, {1 << 5, "ZERO_BASED"}, {1 << 6, "ON_DEMAND"}, {1 << 7, "HUGETLB"}})
}

// MR is a registered memory region.
type MR struct {
	object
	pd     *PD
	addr   uintptr
	length int
	lkey   uint32
	rkey   uint32
}

// RegMR registers buf for access through pd. buf must be memory that
// never moves and outlives the MR, such as a mapping from unix.Mmap; Go
// heap memory is not suitable. The I/O virtual address is buf's address.
func (pd *PD) RegMR(buf []byte, access Access) (*MR, error) {
	c := pd.ctx
	const op = "reg mr"
	if len(buf) == 0 {
		return nil, invalid(c.dev.Name, op, "empty buffer")
	}
	done, err := pd.use(op)
	if err != nil {
		return nil, err
	}
	defer done()
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	req := abi.RegMr{Start: uint64(addr), Length: uint64(len(buf)), HcaVa: uint64(addr), PdHandle: pd.handle, AccessFlags: uint32(access)}
	var resp abi.RegMrResp
	drv := c.prov.udata()
	if err := c.write(op, abi.CmdRegMr.Build(&req, &resp, drv.regMRIn, make([]byte, drv.regMROut))); err != nil {
		return nil, err
	}
	return &MR{object: object{ctx: c, handle: resp.MrHandle, kind: "mr"}, pd: pd, addr: addr, length: len(buf), lkey: resp.Lkey, rkey: resp.Rkey}, nil
}

// LKey is the key local work requests use.
func (mr *MR) LKey() uint32 { return mr.lkey }

// RKey is the key remote peers use.
func (mr *MR) RKey() uint32 { return mr.rkey }

// Addr and Len are the registered range.
func (mr *MR) Addr() uintptr { return mr.addr }

// Len is the registered length.
func (mr *MR) Len() int { return mr.length }

// Close deregisters the region. Safe to call more than once, and
// concurrently.
func (mr *MR) Close() error {
	return mr.destroy(func() error {
		req := abi.DeregMr{MrHandle: mr.handle}
		return mr.ctx.write(fmt.Sprintf("dereg mr %d", mr.handle), abi.CmdDeregMr.Build(&req, nil))
	})
}
