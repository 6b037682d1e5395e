// Package membuf gives the memory an RDMA device reads and writes: a
// Buffer outside the Go heap, registered in a protection domain, whose
// address and key go into work requests.
//
//	buf, err := membuf.New(1 << 20)
//	defer buf.Close()
//	mr, err := buf.Register(pd, uverbs.AccessLocalWrite)
//	defer mr.Close() // before buf.Close
//	sge := uverbs.SGE{Addr: buf.Addr(0), Length: 4096, LKey: mr.LKey()}
//
// A Buffer is an anonymous private mapping, page-aligned and zero-filled,
// that the garbage collector neither moves nor frees: the device may
// write into it at any time while a memory region covers it. For the
// same reason it cannot be unmapped while one does: Close then fails
// with an error matching ErrBusy and the buffer stays, so the device
// never writes into memory the process gave back.
package membuf
