package rdma

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// rdmaCM is the rdma_cm char device and its ABI version, found once per
// process.
var rdmaCM struct {
	once sync.Once
	path string
	abi  uint64
	err  error
}

// findRdmaCM asks RDMA netlink for the rdma_cm char device (GET_CHARDEV),
// falling back on sysfs, as librdmacm does, and checks its ABI version.
func findRdmaCM() (string, error) {
	rdmaCM.once.Do(func() {
		rdmaCM.path, rdmaCM.abi, rdmaCM.err = lookupRdmaCM(netlinkRdmaCM, sysfsRdmaCM)
	})
	return rdmaCM.path, rdmaCM.err
}

// sysfsRdmaCM is where the misc device's ABI version shows when
// rdma_ucm is loaded.
const sysfsRdmaCM = "/sys/class/misc/rdma_cm/abi_version"

func netlinkRdmaCM() (string, uint64, error) {
	c, err := nldev.Dial()
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	ch, err := c.RdmaCMChardev()
	if err != nil {
		return "", 0, err
	}
	return ch.Path(), ch.ABI, nil
}

// lookupRdmaCM finds the device through netlink, else through the sysfs
// file, and checks its ABI version.
func lookupRdmaCM(netlink func() (string, uint64, error), sysfs string) (string, uint64, error) {
	path, abi, err := netlink()
	if err != nil {
		b, err := os.ReadFile(sysfs)
		if err != nil {
			return "", 0, fmt.Errorf("rdma: find the rdma_cm device: neither RDMA netlink nor sysfs knows it (is rdma_ucm loaded?): %w", err)
		}
		if abi, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32); err != nil {
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
