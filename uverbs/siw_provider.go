package uverbs

import (
	"fmt"
	"net"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// siwProvider is the Soft-iWARP data path (rdma/siw-abi.h), worked
// directly as rdma-core's libsiw does. siw is shaped like hardware where
// rxe is not: each queue is kernel memory mapped at the key its create
// command returned, and no index is shared. A slot belongs to whoever
// its flags say: user space fills a free send or receive slot and hands
// it over by storing its flags with VALID last (a release store); the
// kernel clears them when it has taken the element. A completion is the
// next CQ slot whose flags have VALID; user space stores 0 to give it
// back. A CQ is armed by a store into the control word after its
// elements, with no system call; a send rings the doorbell, a POST_SEND
// without work requests, unless the kernel is still at work on the send
// queue (the slot before the first new one is still VALID), as libsiw
// does. iWARP forbids what the generic checks refuse (traits).
type siwProvider struct{}

func (siwProvider) udata() driverUdata {
	return driverUdata{
		getContextOut: kabi.Sizeof[abi.SiwUrespAllocCtx](),
		createCQOut:   kabi.Sizeof[abi.SiwUrespCreateCq](),
		createQPOut:   kabi.Sizeof[abi.SiwUrespCreateQp](),
		createSRQOut:  kabi.Sizeof[abi.SiwUrespCreateSrq](),
		// siw_reg_user_mr refuses (EINVAL) a REG_MR without both;
		// stag_key 0, as rdma-core's libsiw sends.
		regMRIn:  make([]byte, kabi.Sizeof[abi.SiwUreqRegMr]()),
		regMROut: kabi.Sizeof[abi.SiwUrespRegMr](),
	}
}

func (siwProvider) traits() traits                { return traits{iwarp: true, flushOnlyAtError: true} }
func (siwProvider) open(*Context) error           { return nil }
func (siwProvider) close() error                  { return nil }
func (siwProvider) srqNum([]byte) uint32          { return 0 }
func (siwProvider) ahMAC([]byte) net.HardwareAddr { return nil }
func (siwProvider) refuseQueues(string) error     { return nil }
func (siwProvider) hasDataPath() bool             { return true }

// modifySRQ: siw's MODIFY_SRQ carries no driver data, and its ring
// stays where it is.
func (siwProvider) modifySRQ(*kabi.Pins) ([]byte, *abi.MmInfo) { return nil, nil }

func (p siwProvider) prepareCQ(*CQAttr) (driverIO, error) { return sized(p.udata().createCQOut), nil }
func (p siwProvider) prepareQP(*QPInit) (driverIO, error) { return sized(p.udata().createQPOut), nil }
func (p siwProvider) prepareSRQ(*SRQAttr) (driverIO, error) {
	return sized(p.udata().createSRQOut), nil
}

// siwRing is one mapped siw queue: n elements of size bytes from base,
// and the count of elements this side has taken or given (free-running;
// the slot is count % n).
type siwRing struct {
	mem   []byte
	base  unsafe.Pointer
	n     uint32
	size  uintptr
	count uint32
}

// mapSIWRing maps n elements of elem bytes (and extra bytes after them)
// at key. Every queue a successful create made has a key to map, whatever
// its value (see abi.SiwInvalUobjKey).
func mapSIWRing(c *Context, what string, key uint64, n uint32, elem, extra uintptr) (siwRing, error) {
	if n == 0 || n > 1<<20 {
		return siwRing{}, fmt.Errorf("%s: the kernel's queue of %d elements: %w", what, n, unix.EPROTO)
	}
	mem, err := c.mapQueue(key, int(uintptr(n)*elem+extra))
	if err != nil {
		return siwRing{}, err
	}
	return siwRing{mem: mem, base: unsafe.Pointer(&mem[0]), n: n, size: elem}, nil
}

// slot is the element for count i.
func (r *siwRing) slot(i uint32) unsafe.Pointer {
	return unsafe.Add(r.base, uintptr(i%r.n)*r.size)
}

func (r *siwRing) unmap() error {
	if r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	*r = siwRing{}
	return err
}

// flagsWord is the 32-bit word at offset 8 of every siw queue element,
// which holds its flags in the low bits: loaded and stored atomically,
// it orders the element's other fields (libsiw's atomic flags).
func flagsWord(e unsafe.Pointer) *uint32 { return (*uint32)(unsafe.Add(e, 8)) }
