package device

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/netns"
	"github.com/rdmastack/rdmastack/nldev"
)

// Location is where LocateNetNS found a device.
type Location struct {
	// Path opens the namespace: the caller's own
	// (/proc/thread-self/ns/net), a name under /run/netns, or a process's
	// /proc/PID/ns/net.
	Path string
	// Inode is the namespace's nsfs inode, the number ip netns identify
	// and lsns print; it names the namespace while it exists.
	Inode uint64
	// Current: the namespace is the caller's.
	Current bool
	// Index and Name are the device's there (the name may change on a move).
	Index uint32
	Name  string
}

// LocateNetNS finds the network namespace that holds the device with
// node GUID guid, looking at the caller's own first, then those named
// under /run/netns, then those of every process it may open. In shared
// netns mode every namespace sees every device, and the answer is the
// caller's. A device found nowhere gives an error matching os.ErrNotExist.
func LocateNetNS(guid ib.GUID) (Location, error) {
	op := fmt.Sprintf("device: locate netns of device %s", guid)
	seen := make(map[uint64]bool)
	try := func(path string) (Location, bool) {
		f, err := os.Open(path)
		if err != nil {
			return Location{}, false
		}
		defer f.Close()
		ino, err := netns.Check(int(f.Fd()))
		if err != nil || seen[ino] {
			return Location{}, false
		}
		seen[ino] = true
		c, err := nldev.DialNetNS(int(f.Fd()))
		if err != nil {
			return Location{}, false
		}
		defer c.Close()
		devs, err := c.Devices()
		if err != nil {
			return Location{}, false
		}
		for _, d := range devs {
			if d.NodeGUID == guid {
				return Location{Path: path, Inode: ino, Index: d.Index, Name: d.Name}, true
			}
		}
		return Location{}, false
	}
	if l, ok := try("/proc/thread-self/ns/net"); ok {
		l.Current = true
		return l, nil
	}
	if len(seen) == 0 {
		return Location{}, fmt.Errorf("%s: cannot open the caller's network namespace: %w", op, errors.ErrUnsupported)
	}
	named, _ := filepath.Glob("/run/netns/*")
	for _, p := range named {
		if l, ok := try(p); ok {
			return l, nil
		}
	}
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		if _, err := strconv.ParseUint(e.Name(), 10, 31); err != nil {
			continue
		}
		if l, ok := try(filepath.Join("/proc", e.Name(), "ns", "net")); ok {
			return l, nil
		}
	}
	return Location{}, fmt.Errorf("%s: %w", op, os.ErrNotExist)
}
