// Package kabitest fakes the kernel's side of the write(2) commands that
// package kabi sends, for the tests of the packages built on it. The fake
// sees a command the way the kernel does: as addresses. It reads the frame
// from the address write(2) was given and follows each pointer field
// through /proc/self/mem, as copy_from_user and copy_to_user would, after
// checking that the address lies in memory kabi pinned for the call. An
// address outside it is a violation: the fake records it, touches nothing,
// and fails the command with EFAULT.
package kabitest

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

// Kernel is a fake kernel installed as kabi's hook.
type Kernel struct {
	mem    *os.File // /proc/self/mem
	handle func(c *Call) error

	mu         sync.Mutex
	calls      int
	violations []string
}

// Call is one command as the fake kernel sees it.
type Call struct {
	FD    int
	Frame []byte // what write(2) was given, read through its address
	k     *Kernel
	pins  *kabi.Pins
}

// New installs a fake kernel whose handle answers every command kabi
// sends until the test ends; handle's error is what write(2) returns. At
// the end of the test, a violation or a range left pinned fails it.
// Tests that use it must not run in parallel with other kabi users.
func New(t testing.TB, handle func(c *Call) error) *Kernel {
	t.Helper()
	f, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("the fake kernel writes through /proc/self/mem: %v", err)
	}
	k := &Kernel{mem: f, handle: handle}
	restore := kabi.SetHook(k.write)
	t.Cleanup(func() {
		restore()
		f.Close()
		for _, v := range k.Violations() {
			t.Errorf("kernel memory rule broken: %s", v)
		}
		if n := kabi.Pinned(); n != 0 {
			t.Errorf("%d ranges still pinned after the test's commands", n)
		}
	})
	return k
}

// Calls is the number of commands the fake has seen.
func (k *Kernel) Calls() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls
}

// Violations returns the violations recorded so far and forgets them:
// tests that break the rule on purpose take them, so that the cleanup
// does not fail.
func (k *Kernel) Violations() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	v := k.violations
	k.violations = nil
	return v
}

func (k *Kernel) violate(format string, args ...any) error {
	k.mu.Lock()
	k.violations = append(k.violations, fmt.Sprintf(format, args...))
	k.mu.Unlock()
	return unix.EFAULT
}

// write is the hook: write(2) as the kernel runs it.
func (k *Kernel) write(fd int, frame []byte, pins *kabi.Pins) (int, error) {
	k.mu.Lock()
	k.calls++
	k.mu.Unlock()
	c := &Call{FD: fd, k: k, pins: pins}
	if len(frame) == 0 {
		return 0, nil
	}
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(frame))))
	b, err := c.CopyIn(addr, len(frame))
	runtime.KeepAlive(frame)
	if err != nil {
		return 0, err
	}
	c.Frame = b
	if err := k.handle(c); err != nil {
		return 0, err
	}
	return len(frame), nil
}

// allowed reports whether the kernel may touch the n bytes at addr: they
// lie in memory pinned for this call, or (a driver's input pointing at
// memory) in memory pinned through kabi and still pinned.
func (c *Call) allowed(addr uint64, n int) bool {
	return c.pins.Covers(addr, n) || kabi.Live(addr, n)
}

// CopyOut does what copy_to_user does for the kernel: it writes b to the
// address the command gave, which must lie in memory kabi pinned.
func (c *Call) CopyOut(addr uint64, b []byte) error {
	if !c.allowed(addr, len(b)) {
		return c.k.violate("write of %d bytes to %#x, outside the memory pinned for the call %v", len(b), addr, c.pins)
	}
	if len(b) == 0 {
		return nil
	}
	if _, err := c.k.mem.WriteAt(b, int64(addr)); err != nil {
		return fmt.Errorf("copy to %#x: %v: %w", addr, err, unix.EFAULT)
	}
	return nil
}

// CopyIn does what copy_from_user does for the kernel: it reads n bytes
// at the address the command gave, which must lie in memory kabi pinned.
func (c *Call) CopyIn(addr uint64, n int) ([]byte, error) {
	if !c.allowed(addr, n) {
		return nil, c.k.violate("read of %d bytes at %#x, outside the memory pinned for the call %v", n, addr, c.pins)
	}
	b := make([]byte, n)
	if _, err := c.k.mem.ReadAt(b, int64(addr)); err != nil {
		return nil, fmt.Errorf("copy from %#x: %v: %w", addr, err, unix.EFAULT)
	}
	return b, nil
}

// AtDepth runs f with depth frames of about 1 KiB each below the caller
// on the goroutine's stack, so that calls made by f find the stack at a
// different fill each time: some grow it (the runtime copies the stack to
// a new place), and a GC may shrink it afterwards.
func AtDepth(depth int, f func()) {
	var pad [1024]byte
	pad[depth%len(pad)] = byte(depth)
	if depth <= 0 {
		f()
	} else {
		AtDepth(depth-1, f)
	}
	runtime.KeepAlive(&pad)
}

// CollectGarbage runs runtime.GC in a loop until the test ends: each cycle
// shrinks the stacks of goroutines that use less than a quarter of theirs.
func CollectGarbage(t testing.TB) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
				runtime.GC()
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
}
