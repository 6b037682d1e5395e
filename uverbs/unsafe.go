package uverbs

import "unsafe"

// unsafeSlice returns the memory of a slice of ABI structs as bytes.
func unsafeSlice[T any](s []T) []byte {
	var v T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(v)))
}
