// Package netns runs a function inside another network namespace without
// moving the caller: the function runs on a goroutine of its own, locked
// to an OS thread that joins the namespace for the length of the call and
// returns to its own before it is unlocked. A thread that cannot go back
// is never unlocked, so the runtime ends it rather than reuse it.
//
// The kernel reads some requests in the sending thread's namespace, not
// the socket's: an RDMA device moves out of a namespace only when the
// request comes from a thread inside it (rdma_dev_change_netns checks
// current->nsproxy->net_ns), so such a request is sent from Do.
package netns

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// ErrNotNetNS is matched by errors for a file descriptor that is open but
// is not a network namespace (the kernel answers EINVAL to such a fd).
var ErrNotNetNS = errors.New("not a network namespace")

// Check reports whether fd is an open network-namespace file: an error
// matching unix.EBADF when it is closed (or negative), and ErrNotNetNS and
// unix.EINVAL when it is another kind of file. It returns the namespace's
// nsfs inode, which names the namespace.
func Check(fd int) (uint64, error) {
	if fd < 0 {
		return 0, fmt.Errorf("netns fd %d: %w", fd, unix.EBADF)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("netns fd %d: %w", fd, os.NewSyscallError("fstat", err))
	}
	t, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE)
	if err != nil || t != unix.CLONE_NEWNET {
		return 0, fmt.Errorf("netns fd %d: %w", fd, notNetNS{})
	}
	return st.Ino, nil
}

type notNetNS struct{}

func (notNetNS) Error() string { return ErrNotNetNS.Error() }
func (notNetNS) Is(target error) bool {
	return target == ErrNotNetNS || target == unix.EINVAL
}

// Current is the calling thread's network namespace (its nsfs inode).
func Current() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, os.NewSyscallError("stat /proc/thread-self/ns/net", err)
	}
	return st.Ino, nil
}

// OpenCurrent opens the calling thread's network namespace.
func OpenCurrent() (*os.File, error) { return os.Open("/proc/thread-self/ns/net") }

// Do runs fn on a locked OS thread inside the network namespace that fd
// refers to and returns its error. The caller's thread never changes
// namespace. fn must not start goroutines that expect to stay in the
// namespace.
func Do(fd int, fn func() error) error {
	if _, err := Check(fd); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		back, err := OpenCurrent()
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer back.Close()
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- os.NewSyscallError("setns", err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(back.Fd()), unix.CLONE_NEWNET); err != nil {
			// Leave the thread locked: the runtime ends it with the
			// goroutine, so no other goroutine runs in the namespace.
			done <- errors.Join(ferr, os.NewSyscallError("setns back", err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}
