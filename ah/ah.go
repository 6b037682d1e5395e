package ah

import (
	"fmt"
	"sync"

	"github.com/rdmastack/rdmastack/uverbs"
)

// AH is an address handle created from an Attr (rdma_create_user_ah). It
// holds its own reference to the source GID entry, independent of the
// attribute's, released only once the kernel destroyed the handle.
type AH struct {
	mu   sync.Mutex
	u    *uverbs.AH
	sgid *Entry
	attr Attr // as created, owning no reference
}

// CreateAH creates an address handle in pd from a, validated and filled
// against the table as the kernel does (see Table.Fill): the handle takes
// its own reference to the source GID entry; a is left as it was. If the
// kernel refuses, the handle's reference is released too.
func CreateAH(pd *uverbs.PD, t *Table, a *Attr) (*AH, error) {
	old, err := t.Fill(a)
	if err != nil {
		return nil, fmt.Errorf("ah: create: %w", err)
	}
	defer Unfill(a, old)

	ah := &AH{sgid: a.GRH.sgidAttr}
	if ah.sgid != nil {
		ah.sgid.Hold() // rdma_update_sgid_attr: the handle's own reference
	}
	u, err := pd.CreateAH(a.uverbs())
	if err != nil {
		if ah.sgid != nil {
			ah.sgid.Put() // the kernel's "GID entry ref leak when create_ah fails" fix
		}
		return nil, fmt.Errorf("ah: create: %w", err)
	}
	ah.u = u
	assign(&ah.attr, a)
	ah.attr.GRH.sgidAttr = nil
	return ah, nil
}

// uverbs is the attribute as uverbs' create-AH command carries it.
func (a *Attr) uverbs() uverbs.AHAttr {
	return uverbs.AHAttr{
		IsGlobal: a.Flags&FlagGRH != 0, DGID: a.GRH.DGID, FlowLabel: a.GRH.FlowLabel,
		SGIDIndex: a.GRH.SGIDIndex, HopLimit: a.GRH.HopLimit, TrafficClass: a.GRH.TrafficClass,
		DLID: a.IB.DLID, SL: a.SL, SrcPathBits: a.IB.SrcPathBits, StaticRate: a.StaticRate, Port: uint8(a.Port),
	}
}

// Query fills dst with the handle's attributes, owning no reference (as
// rdma_query_ah leaves it). uverbs has no query command, so these are the
// attributes the handle was created with. dst's own reference, if any, is
// released first.
func (ah *AH) Query(dst *Attr) {
	ah.mu.Lock()
	defer ah.mu.Unlock()
	Destroy(dst)
	assign(dst, &ah.attr)
}

// Modify is not possible from user space: uverbs has no modify-AH
// command. The error matches uverbs.ErrNotSupported.
func (ah *AH) Modify(a *Attr) error {
	return fmt.Errorf("ah: modify: the kernel's uverbs has no modify_ah command: %w", uverbs.ErrNotSupported)
}

// Stale reports whether the handle's source GID entry was deleted: its
// traffic may leave with an address that is no longer the host's.
func (ah *AH) Stale() bool {
	ah.mu.Lock()
	defer ah.mu.Unlock()
	return ah.sgid != nil && ah.sgid.State() != EntryValid
}

// Close destroys the handle. The source GID reference is released only
// after the kernel destroyed it; if the kernel refuses, the handle and its
// reference stay. Closing twice is harmless.
func (ah *AH) Close() error {
	ah.mu.Lock()
	defer ah.mu.Unlock()
	if ah.u == nil {
		return nil
	}
	if err := ah.u.Close(); err != nil {
		return fmt.Errorf("ah: destroy: %w", err)
	}
	ah.u = nil
	if ah.sgid != nil {
		ah.sgid.Put()
		ah.sgid = nil
	}
	return nil
}
