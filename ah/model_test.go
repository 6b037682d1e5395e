package ah

import (
	"errors"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// The model: a few lines per rule of the kernel's cache.c and verbs.c,
// kept apart from the implementation so that each step can be compared.

type mEntry struct {
	port, index uint32
	gid         ib.GID
	refs        int
	state       EntryState
	ext         int // references taken by Hold, to be Put
}

type model struct {
	roce    map[uint32]bool
	size    uint32
	entries []*mEntry         // every entry ever added, by id
	slots   map[[2]uint32]int // port,index → entry id
	attrs   []int             // attribute → entry id, -1 for none
}

func (m *model) put(id int) {
	e := m.entries[id]
	e.refs--
	if e.refs == 0 {
		e.state = EntryFreed
		if k := [2]uint32{e.port, e.index}; m.slots[k] == id {
			delete(m.slots, k)
		}
	}
}

func (m *model) del(id int) {
	e := m.entries[id]
	e.state = EntryPendingDelete
	if !m.roce[e.port] {
		delete(m.slots, [2]uint32{e.port, e.index})
	}
	m.put(id)
}

func (m *model) slot(port, index uint32) (int, bool) {
	id, ok := m.slots[[2]uint32{port, index}]
	return id, ok
}

func (m *model) destroy(k int) {
	if id := m.attrs[k]; id >= 0 {
		m.put(id)
		m.attrs[k] = -1
	}
}

func TestModel(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		runModel(t, seed, 400)
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	const nattrs = 6
	m := &model{roce: map[uint32]bool{1: true, 2: false}, size: 4, slots: map[[2]uint32]int{}}
	tab, err := NewTable(PortSpec{Port: 1, Size: 4, RoCE: true}, PortSpec{Port: 2, Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	var impl []*Entry // model id → implementation entry
	attrs := make([]Attr, nattrs)
	m.attrs = make([]int, nattrs)
	for i := range m.attrs {
		m.attrs[i] = -1
	}
	idOf := func(e *Entry) int {
		for id, x := range impl {
			if x == e {
				return id
			}
		}
		return -2
	}

	for step := 0; step < steps; step++ {
		port := uint32(1 + rng.IntN(2))
		index := uint32(rng.IntN(int(m.size)))
		j, k := rng.IntN(nattrs), rng.IntN(nattrs)
		var op string
		switch r := rng.IntN(11); r {
		case 0, 1: // add a GID
			op = "add"
			var gid ib.GID
			gid[0], gid[15] = 0xfe, byte(rng.IntN(3)+1) // few distinct GIDs: duplicates across slots
			e, err := tab.Add(port, index, gid, ib.GIDTypeRoCEv2, "")
			old, occupied := m.slot(port, index)
			switch {
			case occupied && m.entries[old].state != EntryValid:
				if !errors.Is(err, unix.EBUSY) {
					t.Fatalf("seed %d step %d: add over a pending RoCE slot = %v, want EBUSY", seed, step, err)
				}
				continue
			case err != nil:
				t.Fatalf("seed %d step %d: add: %v", seed, step, err)
			}
			if occupied {
				m.del(old)
			}
			m.entries = append(m.entries, &mEntry{port: port, index: index, gid: gid, refs: 1, state: EntryValid})
			m.slots[[2]uint32{port, index}] = len(m.entries) - 1
			impl = append(impl, e)
		case 2: // delete a GID
			op = "delete"
			err := tab.Delete(port, index)
			id, ok := m.slot(port, index)
			if !ok || m.entries[id].state != EntryValid {
				if !errors.Is(err, unix.ENODATA) {
					t.Fatalf("seed %d step %d: delete of an empty slot = %v", seed, step, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("seed %d step %d: delete: %v", seed, step, err)
			}
			m.del(id)
		case 3: // look up and move the reference into an attribute
			op = "get+move-grh"
			e, err := tab.Get(port, index)
			id, ok := m.slot(port, index)
			if !ok || m.entries[id].state != EntryValid {
				if !errors.Is(err, unix.ENODATA) {
					t.Fatalf("seed %d step %d: get of an empty slot = %v", seed, step, err)
				}
				continue
			}
			if err != nil || e != impl[id] {
				t.Fatalf("seed %d step %d: get: %v", seed, step, err)
			}
			m.entries[id].refs++
			// Half the time the old reference is released first; otherwise
			// it leaks, exactly as rdma_move_grh_sgid_attr leaks it.
			if rng.IntN(2) == 0 {
				Destroy(&attrs[j])
				m.destroy(j)
			}
			MoveGRHSGIDAttr(&attrs[j], ib.GID{}, 0, 64, 0, e)
			m.attrs[j] = id
		case 4:
			op = "copy"
			Copy(&attrs[j], &attrs[k])
			m.attrs[j] = m.attrs[k]
			if id := m.attrs[j]; id >= 0 {
				m.entries[id].refs++
			}
		case 5:
			op = "replace"
			Replace(&attrs[j], &attrs[k])
			m.destroy(j)
			m.attrs[j] = m.attrs[k]
			if id := m.attrs[j]; id >= 0 {
				m.entries[id].refs++
			}
		case 6:
			op = "move"
			if j == k {
				continue // rdma_move_ah_attr requires distinct structs
			}
			Move(&attrs[j], &attrs[k])
			m.destroy(j)
			m.attrs[j], m.attrs[k] = m.attrs[k], -1
		case 7, 8:
			op = "destroy"
			Destroy(&attrs[j])
			m.destroy(j)
		case 9: // an extra reference from an attribute's entry
			op = "hold"
			if id := m.attrs[j]; id >= 0 {
				attrs[j].GRH.SGIDAttr().Hold()
				m.entries[id].refs++
				m.entries[id].ext++
			}
		case 10:
			op = "put"
			for id, e := range m.entries {
				if e.ext > 0 {
					impl[id].Put()
					e.ext--
					m.put(id)
					break
				}
			}
		}

		// Compare everything.
		for id, me := range m.entries {
			e := impl[id]
			if e.Refs() != me.refs || e.State() != me.state {
				t.Fatalf("seed %d step %d (%s): entry %d: refs %d state %v, model refs %d state %v",
					seed, step, op, id, e.Refs(), e.State(), me.refs, me.state)
			}
		}
		for i := range attrs {
			if got := idOf(attrs[i].GRH.SGIDAttr()); (attrs[i].GRH.SGIDAttr() == nil && m.attrs[i] != -1) ||
				(attrs[i].GRH.SGIDAttr() != nil && got != m.attrs[i]) {
				t.Fatalf("seed %d step %d (%s): attr %d references %d, model %d", seed, step, op, i, got, m.attrs[i])
			}
			if id := m.attrs[i]; id >= 0 && attrs[i].Stale() != (m.entries[id].state != EntryValid) {
				t.Fatalf("seed %d step %d (%s): attr %d stale=%v", seed, step, op, i, attrs[i].Stale())
			}
		}
		for p := uint32(1); p <= 2; p++ {
			for i := uint32(0); i < m.size; i++ {
				id, ok := m.slot(p, i)
				got := tab.ports[p].slots[i]
				if ok != (got != nil) || (ok && got != impl[id]) {
					t.Fatalf("seed %d step %d (%s): slot %d/%d holds %v, model %v", seed, step, op, p, i, got, id)
				}
			}
		}
	}

	// Release every owned reference: what remains is exactly the model's
	// leaks, which Close must report.
	for i := range attrs {
		Destroy(&attrs[i])
		m.destroy(i)
	}
	for id, e := range m.entries {
		for ; e.ext > 0; e.ext-- {
			impl[id].Put()
			m.put(id)
		}
	}
	err = tab.Close()
	for id, me := range m.entries {
		if me.state == EntryValid {
			m.del(id)
		}
	}
	leaks := 0
	for _, me := range m.entries {
		if me.refs > 0 {
			leaks++
		}
	}
	var le *LeakError
	if (leaks > 0) != errors.As(err, &le) || (le != nil && len(le.Entries) != leaks) {
		t.Fatalf("seed %d: Close = %v, model has %d leaked entries", seed, err, leaks)
	}
}
