package kabi

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Pins is the memory pinned for one call into the kernel: every address
// rdmastack puts where the kernel will follow it comes from Pin, which
// pins the memory first. Unpin releases it all, and the Pins can be used
// again. One goroutine uses a Pins at a time.
type Pins struct {
	p       runtime.Pinner
	spans   []span
	tracked bool // in the live set (only while a hook is set)
}

// span is one pinned range, as the kernel sees it: an address and a length.
type span struct {
	addr uint64
	n    int
}

// pinned counts the ranges pinned through any Pins and not yet unpinned.
var pinned atomic.Int64

// Pinned is the number of ranges pinned through kabi, process-wide, that
// are not yet unpinned: 0 whenever no call is in the kernel. Tests check it
// after their calls.
func Pinned() int { return int(pinned.Load()) }

// Pin pins the memory of b and returns its address for the kernel; an
// empty b pins nothing and is address 0. The whole object b lies in stays
// in place, and alive, until Unpin. Memory outside the Go heap (an mmap)
// needs no pin and gets none, but its address is handed out all the same.
func (ps *Pins) Pin(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	// The pointer escapes through Pin's interface argument: b's memory is
	// on the heap, whatever the caller declared.
	ptr := unsafe.Pointer(unsafe.SliceData(b))
	ps.p.Pin(ptr)
	addr := uint64(uintptr(ptr))
	ps.spans = append(ps.spans, span{addr, len(b)})
	pinned.Add(1)
	if !ps.tracked && hook.Load() != nil {
		track(ps)
	}
	return addr
}

// Unpin unpins everything Pin pinned. It is safe on a Pins that pinned
// nothing, and twice.
func (ps *Pins) Unpin() {
	ps.p.Unpin()
	pinned.Add(-int64(len(ps.spans)))
	clear(ps.spans)
	ps.spans = ps.spans[:0]
	if ps.tracked {
		untrack(ps)
	}
}

// Covers reports whether the n bytes at addr lie inside one range pinned
// by ps: what a fake of the kernel checks before it follows an address.
func (ps *Pins) Covers(addr uint64, n int) bool {
	if n < 0 {
		return false
	}
	for _, s := range ps.spans {
		if addr >= s.addr && addr-s.addr <= uint64(s.n) && uint64(n) <= uint64(s.n)-(addr-s.addr) {
			return true
		}
	}
	return false
}

// String lists the pinned ranges, for test failures.
func (ps *Pins) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ps.spans {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%#x+%d", s.addr, s.n)
	}
	b.WriteByte(']')
	return b.String()
}

// live is every Pins holding pins while a hook is set, so that a fake of
// the kernel can accept an address pinned through kabi for the call by
// other code than Msg (a driver's input pointing at memory).
var live struct {
	sync.Mutex
	set map[*Pins]struct{}
}

func track(ps *Pins) {
	live.Lock()
	if live.set == nil {
		live.set = make(map[*Pins]struct{})
	}
	live.set[ps] = struct{}{}
	ps.tracked = true
	live.Unlock()
}

func untrack(ps *Pins) {
	live.Lock()
	delete(live.set, ps)
	ps.tracked = false
	live.Unlock()
}

// Live reports whether the n bytes at addr lie inside a range pinned
// through kabi that is still pinned. It knows only of pins made while a
// hook is set: it is for fakes of the kernel.
func Live(addr uint64, n int) bool {
	live.Lock()
	defer live.Unlock()
	for ps := range live.set {
		if ps.Covers(addr, n) {
			return true
		}
	}
	return false
}
