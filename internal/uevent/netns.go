package uevent

import (
	"os"

	"golang.org/x/sys/unix"
)

// initUserNSInode is PROC_USER_INIT_INO (include/linux/proc_ns.h): the
// initial user namespace's inode number in nsfs, fixed by the kernel.
const initUserNSInode = 0xEFFFFFFD

// Delivered reports whether the kernel delivers uevents to sockets in the
// calling thread's network namespace: only namespaces owned by the
// initial user namespace receive them. An error means it cannot tell
// (no /proc, or a kernel without NS_GET_USERNS); callers should then
// assume not.
func Delivered() (bool, error) {
	f, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return false, err
	}
	defer f.Close()
	owner, err := unix.IoctlRetInt(int(f.Fd()), unix.NS_GET_USERNS)
	if err != nil {
		return false, os.NewSyscallError("uevent: NS_GET_USERNS", err)
	}
	defer unix.Close(owner)
	var st unix.Stat_t
	if err := unix.Fstat(owner, &st); err != nil {
		return false, os.NewSyscallError("uevent: fstat", err)
	}
	return st.Ino == initUserNSInode, nil
}
