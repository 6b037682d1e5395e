// Package ah brings the kernel's address-handle attribute semantics to Go:
// a program keeps a table of GID entries and builds address-handle
// attributes that hold counted references to them, so that an attribute
// whose source address went away says so (Stale) instead of silently
// naming another address.
//
//	tab, err := ah.NewTable(ah.PortSpec{Port: 1, Size: 16, RoCE: true})
//	sgid, err := tab.Get(1, 3) // held
//	var a ah.Attr
//	ah.MoveGRHSGIDAttr(&a, dgid, 0, 64, 0, sgid) // a owns the reference
//	defer ah.Destroy(&a)
//	if a.Stale() { /* rebuild from the current table */ }
//
// In the kernel (drivers/infiniband/core/verbs.c and cache.c) an AH
// attribute (struct rdma_ah_attr) owns at most one counted reference to a
// source GID table entry, and a small family of functions keeps that
// ownership exact. This package mirrors them over a reference-counted GID
// table that mirrors the kernel's GID cache:
//
//   - Copy (rdma_copy_ah_attr): the destination is treated as invalid and
//     overwritten; the copy holds its own reference.
//   - Replace (rdma_replace_ah_attr): releases the destination's reference
//     first, then copies and holds.
//   - Move (rdma_move_ah_attr): releases the destination's reference and
//     transfers the source's; the source ends owning nothing.
//   - Destroy (rdma_destroy_ah_attr): releases; safe any number of times
//     and on the zero value.
//   - MoveGRHSGIDAttr (rdma_move_grh_sgid_attr): takes over the caller's
//     reference.
//
// GID entries are reference counted, the table holding one reference: an
// entry deleted while referenced becomes pending-delete, invisible to
// lookups, and on RoCE ports its slot stays occupied until the last
// reference goes. An Attr whose source GID was deleted reports Stale, so an
// application can rebuild after an address change instead of silently
// using an index that now means another address.
//
// An Attr must not be copied with assignment: `b := a` would share one
// reference between two owners. Attr carries a no-copy marker, so go vet
// (copylocks) reports such copies; use Copy, Replace or Move.
package ah
