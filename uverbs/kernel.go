package uverbs

import (
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
	"golang.org/x/sys/unix"
)

// kernel is what a Context sends its commands through: the uverbs char
// device, or a fake in tests.
type kernel interface {
	ioctl(c *abi.Ioctl, driver uint32) error
	write(w *abi.WriteCmd) error
	close() error
}

// fdKernel is an open /dev/infiniband/uverbsN.
type fdKernel struct{ fd int }

func (k fdKernel) ioctl(c *abi.Ioctl, driver uint32) error { return c.Do(k.fd, driver) }
func (k fdKernel) write(w *abi.WriteCmd) error             { return abi.Write(k.fd, w) }
func (k fdKernel) close() error                            { return unix.Close(k.fd) }
