package ah

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// PortSpec describes one port of a GID table.
type PortSpec struct {
	Port uint32
	Size uint32 // GID table length
	// RoCE ports keep a deleted entry's slot occupied until its last
	// reference goes (the hardware index cannot be reused); InfiniBand
	// ports free the slot at once.
	RoCE bool
	// GRHRequired ports need a GRH in every AH attribute.
	GRHRequired bool
}

// Table mirrors one device's GID cache (the kernel's struct ib_gid_table,
// one per port). Lookups see only valid entries and return them held.
// A Table is safe for concurrent use.
type Table struct {
	mu     sync.Mutex
	ports  map[uint32]*portTable
	byGID  map[gidKey][]*Entry // valid entries, for Find
	live   map[*Entry]struct{} // entries not yet freed
	closed bool
	misuse atomic.Int64
}

type portTable struct {
	spec  PortSpec
	slots []*Entry // nil: free; a pending entry keeps a RoCE slot
}

type gidKey struct {
	gid ib.GID
	typ ib.GIDType
}

// Errors of table operations; each also matches the errno the kernel
// answers in the same case.
var (
	// ErrNoData: the slot is empty or its entry was deleted (ENODATA).
	ErrNoData = fmt.Errorf("no valid GID entry: %w", unix.ENODATA)
	// ErrNotFound: no valid entry has that GID (ENOENT).
	ErrNotFound = fmt.Errorf("GID not found: %w", unix.ENOENT)
	// ErrClosed: the table was closed.
	ErrClosed = errors.New("ah: GID table closed")
)

// NewTable returns an empty table with the given ports.
func NewTable(ports ...PortSpec) (*Table, error) {
	t := &Table{ports: make(map[uint32]*portTable), byGID: make(map[gidKey][]*Entry), live: make(map[*Entry]struct{})}
	for _, p := range ports {
		if p.Port == 0 || p.Size == 0 {
			return nil, fmt.Errorf("ah: new GID table: port %d of size %d: %w", p.Port, p.Size, unix.EINVAL)
		}
		if _, dup := t.ports[p.Port]; dup {
			return nil, fmt.Errorf("ah: new GID table: port %d twice: %w", p.Port, unix.EINVAL)
		}
		t.ports[p.Port] = &portTable{spec: p, slots: make([]*Entry, p.Size)}
	}
	return t, nil
}

// Port returns the spec of a port.
func (t *Table) Port(port uint32) (PortSpec, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pt, ok := t.ports[port]
	if !ok {
		return PortSpec{}, false
	}
	return pt.spec, true
}

// slot checks a port and index (EINVAL when out of range, as
// rdma_get_gid_attr answers).
func (t *Table) slot(op string, port, index uint32) (*portTable, error) {
	if t.closed {
		return nil, fmt.Errorf("ah: %s: %w", op, ErrClosed)
	}
	pt, ok := t.ports[port]
	if !ok {
		return nil, fmt.Errorf("ah: %s: no port %d: %w", op, port, unix.EINVAL)
	}
	if index >= uint32(len(pt.slots)) {
		return nil, fmt.Errorf("ah: %s: index %d past port %d's %d entries: %w", op, index, port, len(pt.slots), unix.EINVAL)
	}
	return pt, nil
}

// Add stores a GID at port/index, as the kernel's add_modify_gid does: a
// valid entry already there is deleted first; a zero GID is refused
// (EINVAL); a RoCE slot still held by a pending-delete entry is busy
// (EBUSY).
func (t *Table) Add(port, index uint32, gid ib.GID, typ ib.GIDType, netdev string) (*Entry, error) {
	op := fmt.Sprintf("add GID %s at port %d index %d", gid, port, index)
	t.mu.Lock()
	defer t.mu.Unlock()
	pt, err := t.slot(op, port, index)
	if err != nil {
		return nil, err
	}
	if gid.IsZero() {
		return nil, fmt.Errorf("ah: %s: zero GID: %w", op, unix.EINVAL)
	}
	if old := pt.slots[index]; old != nil {
		if old.State() != EntryValid {
			return nil, fmt.Errorf("ah: %s: slot held by a deleted entry with %d references: %w", op, old.Refs(), unix.EBUSY)
		}
		t.deleteLocked(pt, old)
	}
	e := &Entry{GID: gid, Type: typ, Index: index, Port: port, Netdev: netdev, table: t}
	e.refs.Store(1) // the table's own reference
	e.state.Store(int32(EntryValid))
	pt.slots[index] = e
	k := gidKey{gid, typ}
	t.byGID[k] = append(t.byGID[k], e)
	t.live[e] = struct{}{}
	return e, nil
}

// Delete removes the entry at port/index (the kernel's del_gid): it
// becomes pending-delete and the table drops its reference. An empty slot
// gives ErrNoData.
func (t *Table) Delete(port, index uint32) error {
	op := fmt.Sprintf("delete GID at port %d index %d", port, index)
	t.mu.Lock()
	defer t.mu.Unlock()
	pt, err := t.slot(op, port, index)
	if err != nil {
		return err
	}
	e := pt.slots[index]
	if e == nil || e.State() != EntryValid {
		return fmt.Errorf("ah: %s: %w", op, ErrNoData)
	}
	t.deleteLocked(pt, e)
	return nil
}

func (t *Table) deleteLocked(pt *portTable, e *Entry) {
	e.state.Store(int32(EntryPendingDelete))
	k := gidKey{e.GID, e.Type}
	list := t.byGID[k]
	for i, x := range list {
		if x == e {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(t.byGID, k)
	} else {
		t.byGID[k] = list
	}
	if !pt.spec.RoCE {
		pt.slots[e.Index] = nil // IB: the index is free again at once
	}
	if e.refs.Add(-1) == 0 {
		t.freeLocked(e)
	}
}

// release is the last Put of an entry.
func (t *Table) release(e *Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.freeLocked(e)
}

func (t *Table) freeLocked(e *Entry) {
	e.state.Store(int32(EntryFreed))
	if pt := t.ports[e.Port]; pt != nil && pt.slots[e.Index] == e {
		pt.slots[e.Index] = nil
	}
	delete(t.live, e)
}

// Get returns the valid entry at port/index, held (rdma_get_gid_attr):
// EINVAL for a bad port or index, ErrNoData (ENODATA) for an empty or
// deleted slot. The caller must Put it.
func (t *Table) Get(port, index uint32) (*Entry, error) {
	op := fmt.Sprintf("get GID at port %d index %d", port, index)
	t.mu.Lock()
	defer t.mu.Unlock()
	pt, err := t.slot(op, port, index)
	if err != nil {
		return nil, err
	}
	e := pt.slots[index]
	if e == nil || e.State() != EntryValid {
		return nil, fmt.Errorf("ah: %s: %w", op, ErrNoData)
	}
	e.refs.Add(1)
	return e, nil
}

// Find returns a valid entry with the GID and type on any port, held
// (rdma_find_gid); netdev, when not "", must match too. The lookup does not
// depend on the table's size.
func (t *Table) Find(gid ib.GID, typ ib.GIDType, netdev string) (*Entry, error) {
	return t.find(gid, typ, netdev, 0)
}

// FindOnPort is Find restricted to one port (rdma_find_gid_by_port; an
// unknown port gives ErrNotFound, as the kernel's ENOENT).
func (t *Table) FindOnPort(port uint32, gid ib.GID, typ ib.GIDType, netdev string) (*Entry, error) {
	if port == 0 {
		return nil, fmt.Errorf("ah: find GID %s on port 0: %w", gid, ErrNotFound)
	}
	return t.find(gid, typ, netdev, port)
}

func (t *Table) find(gid ib.GID, typ ib.GIDType, netdev string, port uint32) (*Entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("ah: find GID %s: %w", gid, ErrClosed)
	}
	var best *Entry
	for _, e := range t.byGID[gidKey{gid, typ}] {
		if (port != 0 && e.Port != port) || (netdev != "" && e.Netdev != netdev) {
			continue
		}
		// The kernel scans ports and indices in order: the lowest wins.
		if best == nil || e.Port < best.Port || (e.Port == best.Port && e.Index < best.Index) {
			best = e
		}
	}
	if best == nil {
		return nil, fmt.Errorf("ah: find GID %s %s: %w", gid, typ, ErrNotFound)
	}
	best.refs.Add(1)
	return best, nil
}

// Entries returns the valid entries of every port in port and index order,
// without taking references (rdma_query_gid_table).
func (t *Table) Entries() []EntryInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []EntryInfo
	for _, port := range t.sortedPorts() {
		for _, e := range t.ports[port].slots {
			if e != nil && e.State() == EntryValid {
				out = append(out, EntryInfo{GID: e.GID, Type: e.Type, Index: e.Index, Port: e.Port, Netdev: e.Netdev})
			}
		}
	}
	return out
}

// EntryInfo is a copy of an entry's identity, owning no reference.
type EntryInfo struct {
	GID    ib.GID
	Type   ib.GIDType
	Index  uint32
	Port   uint32
	Netdev string
}

func (t *Table) sortedPorts() []uint32 {
	ports := make([]uint32, 0, len(t.ports))
	for p := range t.ports {
		ports = append(ports, p)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	return ports
}

// LeakError is Close's report of references still held: the kernel's
// "GID entry ref leak" check, as an error.
type LeakError struct {
	Entries []string // one line per leaked entry
	Misuse  int64    // Holds and Puts made without a reference
}

func (e *LeakError) Error() string {
	s := fmt.Sprintf("ah: GID table closed with %d entries still referenced", len(e.Entries))
	if len(e.Entries) > 0 {
		s += ": " + strings.Join(e.Entries, "; ")
	}
	if e.Misuse > 0 {
		s += fmt.Sprintf("; %d Hold or Put calls without a reference", e.Misuse)
	}
	return s
}

// Close drops the table's own references. Entries still referenced by
// attributes or address handles are reported in a *LeakError (the entries
// stay usable by their holders). Closing twice is harmless.
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	for _, port := range t.sortedPorts() {
		pt := t.ports[port]
		for _, e := range pt.slots {
			if e != nil && e.State() == EntryValid {
				t.deleteLocked(pt, e)
			}
		}
	}
	t.closed = true
	var leaked []string
	for e := range t.live {
		leaked = append(leaked, e.String())
	}
	sort.Strings(leaked)
	if len(leaked) > 0 || t.misuse.Load() > 0 {
		return &LeakError{Entries: leaked, Misuse: t.misuse.Load()}
	}
	return nil
}

var errInvalid = unix.EINVAL

// SlotState tells what occupies port/index: a valid entry, a deleted one
// still referenced (RoCE slots stay occupied until the last Put), or
// nothing (ok false).
func (t *Table) SlotState(port, index uint32) (state EntryState, refs int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pt, err := t.slot("slot state", port, index)
	if err != nil || pt.slots[index] == nil {
		return 0, 0, false
	}
	e := pt.slots[index]
	return e.State(), e.Refs(), true
}
