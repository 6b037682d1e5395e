package ucma

import "unsafe"

// Bytes returns the memory of *p as a byte slice, without copying: what
// the kernel reads or writes for the C struct that T mirrors.
func Bytes[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// Decode returns b as a T; a short b leaves the rest zero.
func Decode[T any](b []byte) T {
	var v T
	copy(Bytes(&v), b)
	return v
}
