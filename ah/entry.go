package ah

import (
	"fmt"
	"sync/atomic"

	"github.com/rdmastack/rdmastack/ib"
)

// EntryState is the life-cycle state of a GID table entry (the kernel's
// enum gid_table_entry_state).
type EntryState int32

// Entry states.
const (
	// EntryValid: published in the table and visible to lookups.
	EntryValid EntryState = 2 // GID_TABLE_ENTRY_VALID
	// EntryPendingDelete: deleted from the table while references remain;
	// invisible to lookups.
	EntryPendingDelete EntryState = 3 // GID_TABLE_ENTRY_PENDING_DEL
	// EntryFreed: the last reference is gone.
	EntryFreed EntryState = 4
)

func (s EntryState) String() string {
	switch s {
	case EntryValid:
		return "valid"
	case EntryPendingDelete:
		return "pending-delete"
	case EntryFreed:
		return "freed"
	}
	return fmt.Sprintf("EntryState(%d)", int32(s))
}

// Entry is one GID table entry (the kernel's struct ib_gid_attr inside
// struct ib_gid_table_entry). Its fields never change once it is in the
// table; a new address at the same index is a new Entry.
type Entry struct {
	GID    ib.GID
	Type   ib.GIDType
	Index  uint32
	Port   uint32
	Netdev string // "" when the entry has no network device (IB)

	refs  atomic.Int32
	state atomic.Int32
	table *Table
}

// Refs returns the entry's reference count, the table's own included.
func (e *Entry) Refs() int { return int(e.refs.Load()) }

// State returns the entry's state.
func (e *Entry) State() EntryState { return EntryState(e.state.Load()) }

// Hold takes another reference (rdma_hold_gid_attr). The caller must
// already own one; holding a freed entry does not revive it and is counted
// as a misuse that the table's Close reports.
func (e *Entry) Hold() {
	if e.refs.Add(1) <= 1 {
		e.refs.Add(-1)
		e.table.misuse.Add(1)
	}
}

// Put releases a reference (rdma_put_gid_attr). The last one frees the
// entry and, on RoCE ports, the table slot it kept occupied. A Put with no
// reference left changes nothing and is counted as a misuse that the
// table's Close reports.
func (e *Entry) Put() {
	switch n := e.refs.Add(-1); {
	case n == 0:
		e.table.release(e)
	case n < 0:
		e.refs.Add(1)
		e.table.misuse.Add(1)
	}
}

func (e *Entry) String() string {
	return fmt.Sprintf("%s %s index %d port %d (%s, %d refs)", e.GID, e.Type, e.Index, e.Port, e.State(), e.Refs())
}
