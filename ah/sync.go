package ah

import (
	"errors"
	"fmt"
)

// Sync makes the table's valid entries equal the kernel's, given as the
// kernel reports them (QUERY_GID_TABLE, or sysfs): an entry that changed or
// went away is deleted — pending-delete while referenced — and new ones are
// added. Entries that did not change keep their identity and references.
// It returns how many entries were added and deleted.
func (t *Table) Sync(kernel []EntryInfo) (added, deleted int, err error) {
	want := make(map[[2]uint32]EntryInfo, len(kernel))
	for _, e := range kernel {
		if _, ok := t.Port(e.Port); !ok {
			return 0, 0, fmt.Errorf("ah: sync: kernel entry %s on unknown port %d: %w", e.GID, e.Port, errInvalid)
		}
		want[[2]uint32{e.Port, e.Index}] = e
	}
	for _, have := range t.Entries() {
		k := [2]uint32{have.Port, have.Index}
		if w, ok := want[k]; ok && w == have {
			delete(want, k) // unchanged
			continue
		}
		if err := t.Delete(have.Port, have.Index); err != nil {
			return added, deleted, err
		}
		deleted++
	}
	var errs []error
	for _, w := range want {
		if _, err := t.Add(w.Port, w.Index, w.GID, w.Type, w.Netdev); err != nil {
			errs = append(errs, err)
			continue
		}
		added++
	}
	return added, deleted, errors.Join(errs...)
}
