package device

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
)

// Open opens the device's verbs context. The caller owns it and must Close
// it.
func (d Device) Open() (*uverbs.Context, error) {
	if d.Uverbs == "" {
		return nil, fmt.Errorf("device: open %s: the device has no uverbs char device: %w", d.Name, unix.ENODEV)
	}
	return uverbs.Open(d.Device)
}
