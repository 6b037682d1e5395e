package uverbs

import (
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
	"golang.org/x/sys/unix"
)

// kernel is what a Context sends its commands through: the uverbs char
// device, or a fake in tests. It covers the data path's two calls too,
// mapping a queue and ringing a doorbell, so that a host test can run a
// provider's data path against a fake kernel that plays the driver's
// side of the queues.
type kernel interface {
	ioctl(c *abi.Ioctl, driver uint32) error
	write(w *abi.WriteCmd) error
	// mmap maps length bytes of the device at offset (a queue's
	// cookie); the memory is outside the Go heap and unmapped with
	// unix.Munmap.
	mmap(offset int64, length int) ([]byte, error)
	// doorbell writes a data-path command; it must not allocate.
	doorbell(cmd []byte) (int, error)
	// queues reports whether the kernel shares queues with user space
	// (false: a fake kernel of the control path only).
	queues() bool
	close() error
}

// fdKernel is an open /dev/infiniband/uverbsN.
type fdKernel struct{ fd int }

func (k fdKernel) ioctl(c *abi.Ioctl, driver uint32) error { return c.Do(k.fd, driver) }
func (k fdKernel) write(w *abi.WriteCmd) error             { return abi.Write(k.fd, w) }
func (k fdKernel) mmap(offset int64, length int) ([]byte, error) {
	return unix.Mmap(k.fd, offset, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}
func (k fdKernel) doorbell(cmd []byte) (int, error) { return doorbellWrite(k.fd, cmd) }
func (k fdKernel) queues() bool                     { return true }
func (k fdKernel) close() error                     { return unix.Close(k.fd) }
