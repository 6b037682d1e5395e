package testenv

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// fatalTB records a Fatalf instead of ending the test; the helper under
// test runs in its own goroutine, which Fatalf ends.
type fatalTB struct {
	testing.TB
	mu     sync.Mutex
	failed bool
}

func (f *fatalTB) Helper()             {}
func (f *fatalTB) Logf(string, ...any) {}
func (f *fatalTB) Fatalf(string, ...any) {
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fatalTB) hasFailed() (failed bool) { f.mu.Lock(); defer f.mu.Unlock(); return f.failed }

func requireResponsive(t *testing.T, parked int, start func()) bool {
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		RequireResponsive(f, "test", parked, start)
	}()
	<-done
	return !f.hasFailed()
}

// TestRequireResponsiveWantsParked: goroutines parked in the netpoller
// pass; goroutines in a blocking read(2), which hold a thread each, do
// not, however quick the runtime stays.
func TestRequireResponsiveWantsParked(t *testing.T) {
	pipe := func() (r, w *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	r1, _ := pipe()
	r2, _ := pipe()
	if !requireResponsive(t, 2, func() {
		for _, r := range []*os.File{r1, r2} {
			go r.Read(make([]byte, 1))
		}
	}) {
		t.Fatal("two readers parked in the netpoller failed the check")
	}

	var fds [2][2]int
	for i := range fds {
		if err := syscall.Pipe(fds[i][:]); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range fds {
			syscall.Close(p[0])
			syscall.Close(p[1]) // the blocked reads end with EOF
		}
	})
	if requireResponsive(t, 2, func() {
		for _, p := range fds {
			go syscall.Read(p[0], make([]byte, 1))
		}
	}) {
		t.Fatal("two readers blocked in read(2) passed the check")
	}
}
