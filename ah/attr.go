package ah

import (
	"fmt"
	"unsafe"

	"github.com/rdmastack/rdmastack/ib"
)

// AttrType is the kind of an AH attribute (enum rdma_ah_attr_type).
type AttrType uint8

// Attribute types.
const (
	TypeUndefined AttrType = 0 // RDMA_AH_ATTR_TYPE_UNDEFINED
	TypeIB        AttrType = 1 // RDMA_AH_ATTR_TYPE_IB
	TypeRoCE      AttrType = 2 // RDMA_AH_ATTR_TYPE_ROCE
	TypeOPA       AttrType = 3 // RDMA_AH_ATTR_TYPE_OPA
)

func (t AttrType) String() string {
	switch t {
	case TypeUndefined:
		return "undefined"
	case TypeIB:
		return "IB"
	case TypeRoCE:
		return "RoCE"
	case TypeOPA:
		return "OPA"
	}
	return fmt.Sprintf("AttrType(%d)", uint8(t))
}

// Flags are an AH attribute's flags (ah_flags).
type Flags uint8

// FlagGRH says the attribute carries a global route header (IB_AH_GRH).
const FlagGRH Flags = 1

// GlobalRoute is an attribute's GRH (struct ib_global_route).
type GlobalRoute struct {
	DGID         ib.GID
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8

	sgidAttr *Entry // the one counted reference an attribute may own
}

// SGIDAttr returns the source GID entry the attribute references, or nil.
// The reference stays the attribute's.
func (g *GlobalRoute) SGIDAttr() *Entry { return g.sgidAttr }

// noCopy makes go vet's copylocks check report copies of the struct that
// embeds it.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// Attr is an address-handle attribute (struct rdma_ah_attr). The zero
// value is valid and owns nothing. Do not copy an Attr by assignment; use
// Copy, Replace or Move.
type Attr struct {
	_ noCopy

	Type       AttrType
	Port       uint32
	SL         uint8
	StaticRate uint8
	Flags      Flags
	GRH        GlobalRoute

	IB   IBFields   // for TypeIB
	RoCE RoCEFields // for TypeRoCE
	OPA  OPAFields  // for TypeOPA
}

// IBFields are the InfiniBand-only fields.
type IBFields struct {
	DLID        uint16
	SrcPathBits uint8
}

// RoCEFields are the RoCE-only fields.
type RoCEFields struct {
	DMAC [6]byte
}

// OPAFields are the Omni-Path-only fields.
type OPAFields struct {
	DLID        uint32
	SrcPathBits uint8
	MakeGRD     bool
}

// attrValue is Attr without its noCopy marker: the same fields at the
// same offsets (TestAttrValueLayout checks), so that assign can be one
// struct assignment that go vet does not report. Field by field, the copy
// took as long as the atomic operation beside it.
type attrValue struct {
	Type       AttrType
	Port       uint32
	SL         uint8
	StaticRate uint8
	Flags      Flags
	GRH        GlobalRoute
	IB         IBFields
	RoCE       RoCEFields
	OPA        OPAFields
}

// assign copies every field of src into dst, the reference pointer
// included, without touching counts (the C struct assignment).
func assign(dst, src *Attr) {
	*(*attrValue)(unsafe.Pointer(dst)) = *(*attrValue)(unsafe.Pointer(src))
}

// Copy makes dst a copy of src (rdma_copy_ah_attr). dst is treated as
// invalid and overwritten without releasing anything it owned; the copy
// holds its own reference to src's source GID entry.
func Copy(dst, src *Attr) {
	assign(dst, src)
	if dst.GRH.sgidAttr != nil {
		dst.GRH.sgidAttr.Hold()
	}
}

// Replace releases old's reference, then makes it a copy of new holding
// its own reference (rdma_replace_ah_attr). new keeps its reference.
func Replace(old, new *Attr) {
	if old != new && old.GRH.sgidAttr == new.GRH.sgidAttr {
		// Releasing and holding the same entry changes no count; new's
		// reference keeps the entry alive throughout.
		assign(old, new)
		return
	}
	Destroy(old)
	Copy(old, new)
}

// Move releases dst's reference and transfers src's to dst
// (rdma_move_ah_attr); src ends owning nothing.
func Move(dst, src *Attr) {
	Destroy(dst)
	assign(dst, src)
	src.GRH.sgidAttr = nil
}

// Destroy releases the attribute's reference (rdma_destroy_ah_attr). It is
// safe to call any number of times, on the zero value and on nil.
func Destroy(a *Attr) {
	if a == nil || a.GRH.sgidAttr == nil {
		return
	}
	a.GRH.sgidAttr.Put()
	a.GRH.sgidAttr = nil
}

// MoveGRHSGIDAttr sets the attribute's GRH (rdma_move_grh_sgid_attr): the
// flags become exactly FlagGRH, the source GID index is the entry's, and
// the attribute takes over the caller's reference to sgid without a new
// hold. As in the kernel, a reference the attribute owned before is not
// released: Destroy it first.
func MoveGRHSGIDAttr(a *Attr, dgid ib.GID, flowLabel uint32, hopLimit, trafficClass uint8, sgid *Entry) {
	a.Flags = FlagGRH
	a.GRH.DGID = dgid
	a.GRH.FlowLabel = flowLabel
	a.GRH.HopLimit = hopLimit
	a.GRH.TrafficClass = trafficClass
	a.GRH.SGIDIndex = uint8(sgid.Index)
	a.GRH.sgidAttr = sgid
}

// Stale reports whether the attribute references a source GID entry that
// was deleted from its table: its SGID index may now name another address
// (or nothing), and the attribute should be rebuilt.
func (a *Attr) Stale() bool {
	return a.GRH.sgidAttr != nil && a.GRH.sgidAttr.State() != EntryValid
}
