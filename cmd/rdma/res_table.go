package main

import (
	"cmp"
	"slices"

	"github.com/rdmastack/rdmastack/nldev"
)

// resKind is one "rdma resource show KIND": its queries and its table of
// fields. Each field is named once there, with its getter, its print format
// and its filter; the accepted filters, the filtering, the text and the
// JSON are all driven by the table.
type resKind[T any] struct {
	name    string
	perLink bool // qp, cm_id: "link DEV/PORT", one query per port, "link DEV/PORT" printed

	info func(x *T) nldev.ResourceInfo // the device, the owner and the driver attributes
	port func(x *T) uint32             // the port of a per-link kind's object
	// skip reports the objects iproute2 leaves out whatever the filters;
	// port is the port being shown. It may be nil.
	skip func(x *T, port uint32) bool

	fields []resField[T] // in iproute2's print order

	query resQuery[T]
	raw   resQuery[nldev.RawResource] // -r; zero where iproute2 has no raw query (the plain table is shown)
}

// resField is one field of a kind: name is its text label, its JSON key
// and its filter's name.
type resField[T any] struct {
	name   string
	print  format // nil: the field only filters
	filter filterSpec
	get    func(x *T) value
}

// ownerFields are the pid and comm of an object: pid is a number filter
// at rank pidRank in the kind's filter list.
func ownerFields[T any](info func(x *T) nldev.ResourceInfo, pidRank int) []resField[T] {
	return []resField[T]{
		{"pid", fmtNum, numberFilter(pidRank), func(x *T) value {
			if pid := info(x).Owner.PID; pid != 0 {
				return num(pid)
			}
			return value{state: absent} // a kernel object
		}},
		{"comm", fmtComm, noFilter, func(x *T) value {
			o := info(x).Owner
			return value{n: uint64(o.PID), s: o.Kernel}
		}},
	}
}

// object is the kind as "rdma resource show" dispatches it.
func (k *resKind[T]) object() resObject {
	return resObject{name: k.name, perLink: k.perLink, filters: k.filterDefs(), show: k.show}
}

// filterDefs is iproute2's list of the kind's filters: "link" or "dev"
// first, then the fields' filters by rank.
func (k *resKind[T]) filterDefs() []filterDef {
	var fs []*resField[T]
	for i := range k.fields {
		if k.fields[i].filter.rank > 0 {
			fs = append(fs, &k.fields[i])
		}
	}
	slices.SortStableFunc(fs, func(a, b *resField[T]) int { return cmp.Compare(a.filter.rank, b.filter.rank) })
	defs := []filterDef{{name: "dev"}}
	if k.perLink {
		defs[0].name = "link"
	}
	for _, f := range fs {
		defs = append(defs, filterDef{f.name, f.filter.by != byString, f.filter.doit})
	}
	return defs
}

// show prints one device's objects (for a per-link kind one port's).
func (k *resKind[T]) show(rs *resSession, d nldev.Device, port uint32) error {
	if rs.o.raw && k.raw.dump != nil {
		objs, err := k.raw.fetch(rs, d.Index, port)
		if err != nil {
			return err
		}
		return showRaw(rs, objs, k.perLink)
	}
	xs, err := k.query.fetch(rs, d.Index, port)
	if err != nil {
		return err
	}
	return k.printAll(rs, xs, port)
}

// printAll prints the objects that pass the filters, one record each.
func (k *resKind[T]) printAll(rs *resSession, xs []T, port uint32) error {
	for i := range xs {
		x := &xs[i]
		if (k.skip != nil && k.skip(x, port)) || k.hidden(rs.fs, x) {
			continue
		}
		k.print(rs, x)
		if err := rs.p.end(); err != nil {
			return err
		}
	}
	return nil
}

// hidden reports whether the filters hide x.
func (k *resKind[T]) hidden(fs filters, x *T) bool {
	for i := range k.fields {
		f := &k.fields[i]
		if f.filter.by != 0 && !f.filter.inert && fs.hides(f.name, f.filter.by, f.get(x)) {
			return true
		}
	}
	return false
}

// print writes an object's fields: "link DEV/PORT" or "dev DEV", the
// fields it has, the driver attributes.
func (k *resKind[T]) print(rs *resSession, x *T) {
	info := k.info(x)
	if k.perLink {
		printLink(rs.p, info.DevIndex, info.DevName, k.port(x))
	} else {
		printDev(rs.p, info.DevIndex, info.DevName)
	}
	for i := range k.fields {
		f := &k.fields[i]
		if f.print == nil {
			continue
		}
		if v := f.get(x); v.state == present {
			f.print(rs, f.name, v)
		}
	}
	printDriver(rs, info.Driver)
}
