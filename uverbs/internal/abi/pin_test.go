package abi

import (
	"runtime"
	"testing"
)

// TestUnissuedCallPinsNothing: a call built but never issued (its context
// closed first) must not leave buffers pinned — the runtime would panic
// on the leaked pin when the call is collected.
func TestUnissuedCallPinsNothing(t *testing.T) {
	for i := 0; i < 100; i++ {
		c := NewIoctl(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT)
		c.pointer(c.next(1), make([]byte, 64))
		if c.bufs[0] == nil || c.buf.Attrs[0].Data == 0 {
			t.Fatal("the buffer was not recorded")
		}
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
}
