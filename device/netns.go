package device

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/devcache"
	"github.com/rdmastack/rdmastack/internal/netns"
	"github.com/rdmastack/rdmastack/nldev"
)

// NetNS names a network namespace, by an open file descriptor or by a
// path. The zero NetNS is invalid.
type NetNS struct {
	fd    int
	path  string
	named bool // set by NetNSFD and NetNSPath
}

// NetNSFD names the namespace that the open file fd refers to (a
// /proc/PID/ns/net or /run/netns/NAME file). The caller keeps fd open
// for the length of the call and closes it.
func NetNSFD(fd int) NetNS { return NetNS{fd: fd, named: true} }

// NetNSPath names a namespace as iproute2 does: a path (anything with a
// slash), a process id (/proc/PID/ns/net), or a name under /run/netns.
func NetNSPath(p string) NetNS { return NetNS{fd: -1, path: p, named: true} }

func (n NetNS) String() string {
	if n.path == "" && n.fd >= 0 {
		return "fd " + strconv.Itoa(n.fd)
	}
	return n.resolve()
}

// resolve maps the path form to a file name.
func (n NetNS) resolve() string {
	p := n.path
	switch {
	case strings.ContainsRune(p, '/'):
		return p
	case p == "":
		return ""
	}
	if pid, err := strconv.ParseUint(p, 10, 31); err == nil {
		return filepath.Join("/proc", strconv.FormatUint(pid, 10), "ns", "net")
	}
	return filepath.Join("/run/netns", p)
}

// open returns a descriptor of the namespace, checked to be one, with
// its nsfs inode, and what releases it.
func (n NetNS) open() (fd int, ino uint64, release func(), err error) {
	if !n.named || (n.fd < 0 && n.path == "") {
		return -1, 0, nil, fmt.Errorf("no network namespace named: %w", unix.EINVAL)
	}
	release = func() {}
	fd = n.fd
	if n.path != "" {
		p := n.resolve()
		if p == "." || p == ".." || filepath.Base(p) == ".." {
			return -1, 0, nil, fmt.Errorf("network namespace %q: %w", n.path, unix.EINVAL)
		}
		f, err := os.Open(p)
		if err != nil {
			return -1, 0, nil, err
		}
		fd, release = int(f.Fd()), func() { f.Close() }
	}
	ino, err = netns.Check(fd)
	if err != nil {
		release()
		return -1, 0, nil, err
	}
	return fd, ino, release, nil
}

// ListNetNS is List for the network namespace ns: every RDMA device
// visible there (in exclusive netns mode, those assigned to it), with
// their ports' network devices in that namespace. The caller's thread
// does not change namespace. Unlike List it keeps nothing between calls.
// sysfs is read as the caller's mount namespace shows it: in exclusive
// mode a device of another namespace may lack its sysfs path and parent.
func ListNetNS(ns NetNS) (*Snapshot, error) {
	op := "device: list in netns " + ns.String()
	fd, _, release, err := ns.open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer release()
	c, err := nldev.DialNetNS(fd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer c.Close()
	inv, err := c.Inventory()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return join(global.fs, devcache.Join(global.fs.FS, inv)), nil
}

// MoveToNetNS moves the RDMA device with index idx from the caller's
// network namespace into ns (RDMA_NLDEV_CMD_SET with a namespace fd;
// needs CAP_NET_ADMIN in the initial user namespace and exclusive netns
// mode). It is safe to repeat: a device already in ns is left there and
// nil returned. Refusals match nldev.ErrSharedMode (checked before
// anything is sent), nldev.ErrDriverCannotMove (rxe, siw) or
// nldev.ErrBusy; a device in neither namespace matches os.ErrNotExist.
// The kernel keeps the index across moves, not always the name.
func MoveToNetNS(idx uint32, ns NetNS) error {
	return moveTo(fmt.Sprintf("device: move device %d to netns %s", idx, ns), ns, func(c *nldev.Client) (uint32, error) {
		d, err := c.Device(idx)
		return d.Index, err
	})
}

// MoveToNetNSByGUID is MoveToNetNS for the device with node GUID guid,
// the name a device keeps wherever it goes.
func MoveToNetNSByGUID(guid ib.GUID, ns NetNS) error {
	return moveTo(fmt.Sprintf("device: move device %s to netns %s", guid, ns), ns, byGUID(guid))
}

// ReturnFromNetNS moves the device with index idx out of the network
// namespace ns into the caller's, as a CNI plugin's DEL does. What
// leaves nothing to do is not an error: a namespace that is gone (the
// kernel gives its devices back to the initial namespace when it goes),
// (its path missing, or a file that is no longer a namespace mount), a
// device no longer there, shared mode (devices never moved). The
// request is sent from a thread inside ns, which the kernel requires,
// for the length of the call only.
func ReturnFromNetNS(idx uint32, ns NetNS) error {
	return returnFrom(fmt.Sprintf("device: return device %d from netns %s", idx, ns), ns, func(c *nldev.Client) (uint32, error) {
		d, err := c.Device(idx)
		return d.Index, err
	})
}

// ReturnFromNetNSByGUID is ReturnFromNetNS for the device with node
// GUID guid.
func ReturnFromNetNSByGUID(guid ib.GUID, ns NetNS) error {
	return returnFrom(fmt.Sprintf("device: return device %s from netns %s", guid, ns), ns, byGUID(guid))
}

// lookup finds a device through a client: its index, or an error
// matching os.ErrNotExist.
type lookup func(*nldev.Client) (uint32, error)

func byGUID(guid ib.GUID) lookup {
	return func(c *nldev.Client) (uint32, error) {
		devs, err := c.Devices()
		if err != nil {
			return 0, err
		}
		for _, d := range devs {
			if d.NodeGUID == guid {
				return d.Index, nil
			}
		}
		return 0, fmt.Errorf("no device with node GUID %s: %w", guid, os.ErrNotExist)
	}
}

func moveTo(op string, ns NetNS, find lookup) error {
	fd, ino, release, err := ns.open()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer release()
	here, err := netns.Current()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c, err := nldev.Dial()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer c.Close()
	idx, ferr := find(c)
	if ferr != nil && !errors.Is(ferr, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", op, ferr)
	}
	if ferr == nil && ino == here {
		return nil // already where it should go
	}
	sys, err := c.System()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if sys.NetnsMode == nldev.NetnsShared {
		if ferr != nil {
			return fmt.Errorf("%s: %w", op, ferr) // every namespace sees every device
		}
		// What the kernel would answer, without asking it.
		return fmt.Errorf("%s: %w (%w)", op, nldev.ErrSharedMode, unix.EOPNOTSUPP)
	}
	if ferr != nil {
		// Not here: moved already, or not anywhere we can see.
		there, err := nldev.DialNetNS(fd)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		defer there.Close()
		if _, err := find(there); err == nil {
			return nil
		}
		return fmt.Errorf("%s: %w", op, ferr)
	}
	if err := c.SetNetnsFD(idx, fd); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

func returnFrom(op string, ns NetNS, find lookup) error {
	fd, ino, release, err := ns.open()
	if ns.path != "" && (errors.Is(err, os.ErrNotExist) || errors.Is(err, netns.ErrNotNetNS)) {
		// The namespace is gone, and its devices with it; a file left
		// where its bind mount was is no namespace.
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer release()
	here, err := netns.Current()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if ino == here {
		return nil
	}
	back, err := netns.OpenCurrent()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer back.Close()
	err = netns.Do(fd, func() error {
		// On this thread the socket and the request are both in ns.
		c, err := nldev.Dial()
		if err != nil {
			return err
		}
		defer c.Close()
		sys, err := c.System()
		if err != nil {
			return err
		}
		if sys.NetnsMode == nldev.NetnsShared {
			return nil // nothing moves in shared mode
		}
		idx, err := find(c)
		if errors.Is(err, os.ErrNotExist) {
			return nil // moved already, or gone
		}
		if err != nil {
			return err
		}
		return c.SetNetnsFD(idx, int(back.Fd()))
	})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}
