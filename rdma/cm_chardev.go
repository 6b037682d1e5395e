package rdma

import (
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/nlconn"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// rdmaCM is the rdma_cm char device and its ABI version, once found. A
// failed lookup is not kept: rdma_ucm may be loaded later in a long-lived
// process.
var rdmaCM struct {
	mu   sync.Mutex
	path string
	abi  uint64
}

// findRdmaCM asks RDMA netlink for the rdma_cm char device (GET_CHARDEV),
// falling back on sysfs, as librdmacm does, and checks its ABI version.
func findRdmaCM() (string, error) {
	rdmaCM.mu.Lock()
	defer rdmaCM.mu.Unlock()
	if rdmaCM.path != "" {
		return rdmaCM.path, nil
	}
	path, abi, err := lookupRdmaCM(netlinkRdmaCM, sysfsRdmaCM)
	if err != nil {
		return "", err
	}
	rdmaCM.path, rdmaCM.abi = path, abi
	return path, nil
}

// openRdmaCM opens a new file of the rdma_cm device. When the device is
// gone (rdma_ucm unloaded since it was found) it forgets the path and
// says what is missing.
func openRdmaCM() (int, string, error) {
	path, err := findRdmaCM()
	if err != nil {
		return -1, "", err
	}
	n, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch err {
	case nil:
		return n, path, nil
	case unix.ENOENT, unix.ENXIO, unix.ENODEV:
		rdmaCM.mu.Lock()
		rdmaCM.path = ""
		rdmaCM.mu.Unlock()
		return -1, path, fmt.Errorf("rdma: open %s (is rdma_ucm loaded?): %w: %w", path, ErrNotSupported, err)
	}
	return -1, path, fmt.Errorf("rdma: open %s: %w", path, err)
}

// sysfsRdmaCM is where the misc device's ABI version shows when
// rdma_ucm is loaded.
const sysfsRdmaCM = "/sys/class/misc/rdma_cm/abi_version"

func netlinkRdmaCM() (string, uint64, error) {
	var ch nldev.Chardev
	err := nlconn.Do(func(c *nldev.Client) (err error) {
		ch, err = c.RdmaCMChardev()
		return err
	})
	if err != nil {
		return "", 0, err
	}
	return ch.Path(), ch.ABI, nil
}

// lookupRdmaCM finds the device through netlink, else through the sysfs
// file, and checks its ABI version.
func lookupRdmaCM(netlink func() (string, uint64, error), sysfsPath string) (string, uint64, error) {
	path, abi, err := netlink()
	if err != nil {
		b, err := sysfs.ReadString(sysfsPath)
		if err != nil {
			return "", 0, fmt.Errorf("rdma: find the rdma_cm device: neither RDMA netlink nor sysfs knows it (is rdma_ucm loaded?): %w: %w", ErrNotSupported, err)
		}
		if abi, err = strconv.ParseUint(b, 10, 32); err != nil {
			return "", 0, fmt.Errorf("rdma: rdma_cm abi_version %q: %w", b, unix.EPROTO)
		}
		path = "/dev/infiniband/rdma_cm"
	}
	if abi < ucma.MinABIVersion || abi > ucma.ABIVersion {
		return "", 0, fmt.Errorf("rdma: the kernel's rdma_cm speaks ABI version %d; this package speaks %d to %d: %w",
			abi, ucma.MinABIVersion, ucma.ABIVersion, ErrNotSupported)
	}
	return path, abi, nil
}
