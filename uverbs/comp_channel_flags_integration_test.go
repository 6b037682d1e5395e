package uverbs_test

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestIntegrationCompChannelFlags: the kernel hands out its event fds
// close-on-exec (rdma_core.c's alloc_begin_fd_uobject), which waitfd.New
// relies on instead of setting FD_CLOEXEC itself, and New's one F_SETFL
// makes the channel non-blocking.
func TestIntegrationCompChannelFlags(t *testing.T) {
	e := newEnv(t)
	ch, err := e.c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	fdfl, err := unix.FcntlInt(uintptr(ch.FD()), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := unix.FcntlInt(uintptr(ch.FD()), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fdfl&unix.FD_CLOEXEC == 0 || fl&unix.O_NONBLOCK == 0 {
		t.Fatalf("completion channel fd: fd flags %#x, flags %#x: want FD_CLOEXEC and O_NONBLOCK", fdfl, fl)
	}
}
