package ah

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Check validates an attribute against the table's ports as the kernel's
// rdma_check_ah_attr does: the port must exist; a GRH is required on RoCE
// attributes and on GRH-required ports; a source GID entry already
// referenced must match the GRH's index and the port. Failures match
// unix.EINVAL.
func (t *Table) Check(a *Attr) error {
	spec, ok := t.Port(a.Port)
	if !ok {
		return fmt.Errorf("ah: check attribute: no port %d: %w", a.Port, unix.EINVAL)
	}
	if (spec.GRHRequired || a.Type == TypeRoCE) && a.Flags&FlagGRH == 0 {
		return fmt.Errorf("ah: check attribute: port %d needs a GRH: %w", a.Port, unix.EINVAL)
	}
	if e := a.GRH.sgidAttr; e != nil && (e.Index != uint32(a.GRH.SGIDIndex) || e.Port != a.Port) {
		return fmt.Errorf("ah: check attribute: source GID entry %d on port %d does not match index %d on port %d: %w",
			e.Index, e.Port, a.GRH.SGIDIndex, a.Port, unix.EINVAL)
	}
	return nil
}

// Fill prepares an attribute for creating or modifying an address handle
// (rdma_fill_sgid_attr): it checks it, and when it has a GRH but no source
// GID entry yet, it moves a held reference to the entry at GRH.SGIDIndex
// into it (EINVAL for a bad index, ErrNoData for an empty or deleted slot).
// It returns the entry the attribute referenced before, for Unfill.
func (t *Table) Fill(a *Attr) (old *Entry, err error) {
	old = a.GRH.sgidAttr
	if err := t.Check(a); err != nil {
		return old, err
	}
	if a.Flags&FlagGRH == 0 || old != nil {
		return old, nil
	}
	e, err := t.Get(a.Port, uint32(a.GRH.SGIDIndex))
	if err != nil {
		return old, err
	}
	a.GRH.sgidAttr = e
	return old, nil
}

// Unfill undoes Fill (rdma_unfill_sgid_attr): if Fill added a reference,
// it is released, so the caller sees its attribute as it was.
func Unfill(a *Attr, old *Entry) {
	if a.GRH.sgidAttr != old {
		Destroy(a)
	}
}
