package uverbs

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// queue is one rxe queue mapped from the kernel: struct rxe_queue_buf and
// its elements. Both indices are kept masked. For queues user space fills
// (send, receive, SRQ) it owns producer_index and the kernel
// consumer_index; for CQs the reverse.
type queue struct {
	mem   []byte
	hdr   *abi.RxeQueueBuf
	data  unsafe.Pointer
	mask  uint32
	shift uint32
}

const queueHdrSize = int(unsafe.Sizeof(abi.RxeQueueBuf{}))

func mapRxeQueue(c *Context, what string, mi abi.MmInfo) (queue, error) {
	if int(mi.Size) < queueHdrSize {
		return queue{}, fmt.Errorf("%s: the kernel's queue of %d bytes is smaller than its header: %w", what, mi.Size, unix.EPROTO)
	}
	mem, err := c.mapQueue(mi.Offset, int(mi.Size))
	if err != nil {
		return queue{}, err
	}
	hdr := (*abi.RxeQueueBuf)(unsafe.Pointer(&mem[0]))
	q := queue{mem: mem, hdr: hdr, data: unsafe.Pointer(&mem[queueHdrSize]),
		mask: atomic.LoadUint32(&hdr.IndexMask), shift: atomic.LoadUint32(&hdr.Log2ElemSize)}
	if err := checkQueueHeader(what, q.mask, q.shift, len(mem)); err != nil {
		unix.Munmap(mem)
		return queue{}, err
	}
	return q, nil
}

// checkQueueHeader refuses a queue header that does not describe a ring
// inside the mapping of mapLen bytes: elements of at most 1 MiB, a
// number of slots (mask+1) that is a power of two and fits the 32-bit
// indices (a mask of 0xffffffff would wrap mask+1 to 0, which a check
// in 32 bits takes for a power of two of no size), and slots that fit.
func checkQueueHeader(what string, mask, shift uint32, mapLen int) error {
	slots := uint64(mask) + 1
	if shift > 20 || slots&(slots-1) != 0 || slots > 1<<31 ||
		uint64(queueHdrSize)+slots<<shift > uint64(mapLen) {
		return fmt.Errorf("%s: queue header (elements 1<<%d bytes, mask %#x) exceeds the %d-byte mapping: %w",
			what, shift, mask, mapLen, unix.EPROTO)
	}
	return nil
}

func (q *queue) unmap() error {
	if q.mem == nil {
		return nil
	}
	err := unix.Munmap(q.mem)
	*q = queue{}
	return err
}

// replace puts next, a queue the kernel moved q's elements to (a resize),
// in q's place and unmaps the old one.
func (q *queue) replace(next queue, err error) error {
	if err != nil {
		return err
	}
	old := *q
	*q = next
	return old.unmap()
}

func (q *queue) elemSize() int { return 1 << q.shift }

func (q *queue) elem(i uint32) unsafe.Pointer {
	return unsafe.Add(q.data, uintptr(i&q.mask)<<q.shift)
}

// free is the number of slots user space can fill (producer side).
func (q *queue) free() uint32 {
	prod := atomic.LoadUint32(&q.hdr.ProducerIndex)
	cons := atomic.LoadUint32(&q.hdr.ConsumerIndex) // acquire: the kernel is done with the slots
	return q.mask - (prod-cons)&q.mask
}

// produce returns the next slot to fill (producer side), or false when
// the queue is full.
func (q *queue) produce() (uint32, bool) {
	prod := atomic.LoadUint32(&q.hdr.ProducerIndex)
	cons := atomic.LoadUint32(&q.hdr.ConsumerIndex)
	return prod, (prod+1-cons)&q.mask != 0
}

// publish hands slot prod to the kernel (a release store).
func (q *queue) publish(prod uint32) {
	atomic.StoreUint32(&q.hdr.ProducerIndex, (prod+1)&q.mask)
}

// consume returns the next slot to read (consumer side), or false when
// the queue is empty.
func (q *queue) consume() (uint32, bool) {
	cons := atomic.LoadUint32(&q.hdr.ConsumerIndex)
	prod := atomic.LoadUint32(&q.hdr.ProducerIndex) // acquire: the element is written
	return cons, (prod-cons)&q.mask != 0
}

// count is the number of elements waiting (consumer side).
func (q *queue) count() uint32 {
	cons := atomic.LoadUint32(&q.hdr.ConsumerIndex)
	prod := atomic.LoadUint32(&q.hdr.ProducerIndex)
	return (prod - cons) & q.mask
}

// produced is the producer index (consumer side: how far the kernel has
// filled the queue).
func (q *queue) produced() uint32 { return atomic.LoadUint32(&q.hdr.ProducerIndex) }

// release gives slot cons back to the kernel (a release store).
func (q *queue) release(cons uint32) {
	atomic.StoreUint32(&q.hdr.ConsumerIndex, (cons+1)&q.mask)
}
