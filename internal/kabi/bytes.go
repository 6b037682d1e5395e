package kabi

import "unsafe"

// Bytes returns the memory of *p as a byte slice, without copying: what
// the kernel reads or writes for the C struct that T mirrors.
func Bytes[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// Decode returns b as a T. A b shorter than T leaves the rest zero, as the
// kernel's own zero-extension does for short structs; extra bytes are
// ignored.
func Decode[T any](b []byte) T {
	var v T
	copy(Bytes(&v), b)
	return v
}

// Sizeof is the size of T in bytes.
func Sizeof[T any]() int {
	var v T
	return int(unsafe.Sizeof(v))
}
