package device

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
)

// Open opens the device's verbs context. The caller owns it and must Close
// it.
func (d Device) Open() (*uverbs.Context, error) {
	if d.Uverbs == nil {
		return nil, fmt.Errorf("device: open %s: the device has no uverbs char device: %w", d.Name, unix.ENODEV)
	}
	return uverbs.Open(uverbs.Device{
		Name: d.Name, Index: int64(d.Index), NodeGUID: d.NodeGUID, NodeType: d.NodeType,
		Uverbs: d.Uverbs.Name, Dev: d.Uverbs.Dev, ABI: uint32(d.Uverbs.ABI), DriverID: d.DriverID,
	})
}
