package main

import "github.com/rdmastack/rdmastack/nldev"

// value is one field's value in one object, as its getter returns it.
type value struct {
	state presence
	n     uint64 // a number (comm: the owner's pid)
	s     string // a string (comm: the kernel owner's name; addresses: the address, n the port)
	qps   []nldev.QPNRange
}

// presence says whether an object has a field, and how filters treat it.
type presence uint8

const (
	present presence = iota
	// absent: not printed; a number filter on the field hides the object,
	// a string filter compares s (iproute2's default for the field).
	absent
	// exempt: not printed, and the field's filter does not apply.
	exempt
)

func num[N ~uint32 | ~uint64](v N) value { return value{n: uint64(v)} }

// optNum is a number the object may lack.
func optNum[N ~uint32 | ~uint64](v *N) value {
	if v == nil {
		return value{state: absent}
	}
	return num(*v)
}

func str(s string) value { return value{s: s} }

// orDefault is s, marked absent unless ok: a string filter still
// compares it.
func orDefault(s string, ok bool) value {
	if ok {
		return str(s)
	}
	return value{state: absent, s: s}
}

// deref is *v, or the zero value for nil.
func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
