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
		rdmaCM.path, rdmaCM.abi, rdmaCM.err = lookupRdmaCM()
		if rdmaCM.err == nil && (rdmaCM.abi < ucma.MinABIVersion || rdmaCM.abi > ucma.ABIVersion) {
			rdmaCM.err = fmt.Errorf("rdma: the kernel's rdma_cm speaks ABI version %d; this package speaks %d to %d: %w",
				rdmaCM.abi, ucma.MinABIVersion, ucma.ABIVersion, ErrNotSupported)
		}
	})
	return rdmaCM.path, rdmaCM.err
}

func lookupRdmaCM() (string, uint64, error) {
	if c, err := nldev.Dial(); err == nil {
		ch, err := c.RdmaCMChardev()
		c.Close()
		if err == nil {
			return ch.Path(), ch.ABI, nil
		}
	}
	b, err := os.ReadFile("/sys/class/misc/rdma_cm/abi_version")
	if err != nil {
		return "", 0, fmt.Errorf("rdma: find the rdma_cm device: neither RDMA netlink nor sysfs knows it (is rdma_ucm loaded?): %w", err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return "", 0, fmt.Errorf("rdma: rdma_cm abi_version %q: %w", b, unix.EPROTO)
	}
	return "/dev/infiniband/rdma_cm", v, nil
}
