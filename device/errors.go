package device

import (
	"fmt"
	"os"
)

// Errors of the lookups. Each also matches os.ErrNotExist.
var (
	// ErrUnknownParent: no RDMA device has the PCI function or auxiliary
	// device asked for.
	ErrUnknownParent = fmt.Errorf("no RDMA device of that parent: %w", os.ErrNotExist)
	// ErrUnknownNetdev: no RDMA port is behind the network device asked
	// for (or there is no such network device).
	ErrUnknownNetdev = fmt.Errorf("no RDMA port behind that network device: %w", os.ErrNotExist)
	// ErrUnknownPort: the device has no port of that number.
	ErrUnknownPort = fmt.Errorf("no such port: %w", os.ErrNotExist)
)
