package kabi

import "sync/atomic"

// Hook stands in for write(2) in tests. It gets the fd, the frame Send
// would write (kabi's memory, pinned) and the memory pinned for the call,
// and answers as write(2) would: the count written, or the errno.
type Hook func(fd int, frame []byte, pins *Pins) (int, error)

var hook atomic.Pointer[Hook]

// SetHook makes every Send call h instead of write(2) until restore is
// called, which brings back what was there before. While a hook is set,
// kabi also keeps the set of live pins that Live reports on. It is for
// fakes of the kernel (package kabitest); nothing else sets it.
func SetHook(h Hook) (restore func()) {
	prev := hook.Swap(&h)
	return func() { hook.Store(prev) }
}
