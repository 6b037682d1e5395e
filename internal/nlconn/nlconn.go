// Package nlconn holds the process's one RDMA netlink socket.
//
// Every package of the module that asks RDMA netlink about devices goes
// through Do: internal/devcache for the inventory that package device and
// rdma's device list share, uverbs for DeviceByName and for telling that
// a device is gone, rdma for the rdma_cm char device. So a process keeps
// one NETLINK_RDMA socket however many of them it uses, as docs/design.md
// promises. (The command-line tools, which dial once and exit, keep their
// own.)
package nlconn

import (
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev"
)

var (
	mu    sync.Mutex    // serializes Do: an nldev.Client serves one caller at a time
	netns uint64        // the namespace (nsfs inode) of nl
	nl    *nldev.Client // nil: dial at the next Do

	dial = nldev.Dial // tests replace it
)

// Do calls fn with the process's RDMA netlink client for the calling
// thread's network namespace, dialling it first when there is none or
// the one there is belongs to another namespace. Calls are serialized;
// fn must not call Do. The error is fn's, or the dial's (matching
// nldev.ErrNoRDMA on a kernel without RDMA), unchanged. An error other
// than the kernel's answer about a device (os.ErrNotExist: no such
// device; unix.EOPNOTSUPP: it has no such char device) closes the socket,
// so that the next call starts on a fresh one.
func Do(fn func(*nldev.Client) error) error {
	ns, err := NetNS()
	mu.Lock()
	defer mu.Unlock()
	if nl != nil && (err != nil || ns != netns) {
		drop()
	}
	if nl == nil {
		if nl, err = dial(); err != nil {
			nl = nil
			return err
		}
		netns = ns
	}
	if err := fn(nl); err != nil {
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.EOPNOTSUPP) {
			drop()
		}
		return err
	}
	return nil
}

func drop() {
	nl.Close()
	nl, netns = nil, 0
}

// NetNS is the calling thread's network namespace (its nsfs inode); an
// error when /proc cannot tell.
func NetNS() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
