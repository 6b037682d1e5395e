package uverbs

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// This file is what data-path providers (package uverbs/rxe) build on:
// the drivers' create responses, mappings of the queues the kernel shares
// with user space, and raw write() commands for the hot path.

// Context is the context the CQ was created in.
func (cq *CQ) Context() *Context { return cq.ctx }

// Context is the context the QP was created in.
func (qp *QP) Context() *Context { return qp.ctx }

// Context is the context the SRQ was created in.
func (s *SRQ) Context() *Context { return s.ctx }

// DriverData is a copy of the driver's part of the create-CQ response
// (for rxe struct rxe_create_cq_resp; empty for drivers without one).
func (cq *CQ) DriverData() []byte { return bytes.Clone(cq.driver) }

// DriverData is a copy of the driver's part of the create-QP response
// (for rxe struct rxe_create_qp_resp).
func (qp *QP) DriverData() []byte { return bytes.Clone(qp.driver) }

// DriverData is a copy of the driver's part of the create-SRQ response
// (for rxe struct rxe_create_srq_resp).
func (s *SRQ) DriverData() []byte { return bytes.Clone(s.driver) }

// DriverNum is the number the driver gave the address handle (rxe's
// ah_num, which UD work requests carry); 0 when the driver gave none.
func (ah *AH) DriverNum() uint32 { return ah.ahNum }

// fd is the char device's descriptor, for providers; ok is false for a
// context that is not backed by one (tests' fake kernels).
func (c *Context) fd() (int, bool) {
	k, ok := c.k.(fdKernel)
	return k.fd, ok
}

// MapQueue maps length bytes of the char device at offset, the cookie a
// driver returned for a queue it shares with user space (rxe's struct
// mminfo). Unmap the result with unix.Munmap.
func (c *Context) MapQueue(offset uint64, length int) ([]byte, error) {
	op := fmt.Sprintf("map queue at %#x", offset)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, wrap(c.dev.Name, op, errClosed)
	}
	fd, ok := c.fd()
	if !ok {
		return nil, wrap(c.dev.Name, op, fmt.Errorf("no char device: %w", ErrNotSupported))
	}
	if length <= 0 || int64(offset) < 0 {
		return nil, invalid(c.dev.Name, op, "length %d", length)
	}
	b, err := unix.Mmap(fd, int64(offset), length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	return b, wrap(c.dev.Name, op, err)
}

// WriteCommand writes cmd, a complete write() command (struct
// ib_uverbs_cmd_hdr first), to the char device: the data path's
// doorbells (POST_SEND without work requests, REQ_NOTIFY_CQ). It does not
// allocate. Any response pointer inside cmd must point to memory outside
// the Go heap (an mmap), since the kernel writes there.
func (c *Context) WriteCommand(op string, cmd []byte) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return wrap(c.dev.Name, op, errClosed)
	}
	fd, ok := c.fd()
	if !ok {
		return wrap(c.dev.Name, op, ErrNotSupported)
	}
	for {
		n, err := rawWrite(fd, cmd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return wrap(c.dev.Name, op, err)
		}
		if n != len(cmd) {
			return wrap(c.dev.Name, op, unix.EPROTO)
		}
		return nil
	}
}

// A waiter passes through the scheduler every yieldEvery, inside
// sysmon's 10 ms preemption period, so that sysmon does not see a
// goroutine running for 10 ms and signal it. It reads the (monotonic)
// clock only every clockEvery-th wait: under TCG each clock read and each
// pass through the scheduler cost about 1% of an event-mode round trip
// when done per event. A wait that is not checked is still safe: sysmon's
// signal interrupts it (rawsys.go).
const (
	yieldEvery = 8 * time.Millisecond
	clockEvery = 4
)

// epoch is what the channels' yield times count from.
var epoch = time.Now()

// GetEvent waits until deadline (the zero time: for ever) for the next
// completion event on the channel and returns the CQ it names (nil if
// that CQ was closed since). A passed deadline gives an error matching
// os.ErrDeadlineExceeded. The CQ must be re-armed (a provider's request
// for notification) to report again.
//
// The wait is poll(2) on the calling thread, outside the scheduler's
// system-call bookkeeping, and without a timeout unless there is a
// deadline (see rawsys.go for why, and why the runtime can still stop
// the goroutine). Do not Close the channel while a GetEvent waits on it.
func (ch *CompChannel) GetEvent(deadline time.Time) (*CQ, error) {
	const op = "get cq event"
	for {
		// Wait first, then read: a wait usually follows a post, so the
		// event is not there yet and an early read would only cost a
		// system call (TryGetEvent is for a caller that knows better).
		timeout := rawWaitForever
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return nil, wrap(ch.ctx.dev.Name, op, os.ErrDeadlineExceeded)
			}
			ms := int((d + time.Millisecond - 1) / time.Millisecond)
			if timeout < 0 || ms < timeout {
				timeout = ms
			}
		}
		if ch.waits.Add(1)%clockEvery == 0 {
			if now := time.Since(epoch); now-time.Duration(ch.yielded.Load()) > yieldEvery {
				ch.yielded.Store(int64(now))
				runtime.Gosched()
			}
		}
		if err := rawPoll(ch.fd, timeout); err == unix.EINTR {
			runtime.Gosched() // the runtime wants the goroutine: let it
			continue
		} else if err != nil {
			return nil, wrap(ch.ctx.dev.Name, op, err)
		}
		if cq, ok, err := ch.readEvent(op); err != nil || ok {
			return cq, err
		}
	}
}

// TryGetEvent returns the CQ of a completion event already queued on the
// channel (nil if that CQ was closed since), without waiting: ok is false
// when there is none. It is one system call where GetEvent is two, for a
// caller that knows an event is there: a provider that sees a completion
// in an armed CQ.
func (ch *CompChannel) TryGetEvent() (cq *CQ, ok bool, err error) {
	return ch.readEvent("get cq event")
}

// readEvent reads one event from the non-blocking channel; ok is false
// when none is queued.
func (ch *CompChannel) readEvent(op string) (*CQ, bool, error) {
	var desc abi.CompEventDesc
	b := abi.Bytes(&desc)
	n, err := rawRead(ch.fd, b)
	for err == unix.EINTR {
		n, err = rawRead(ch.fd, b)
	}
	if err == unix.EAGAIN {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, wrap(ch.ctx.dev.Name, op, err)
	}
	if n != len(b) {
		return nil, false, wrap(ch.ctx.dev.Name, op, fmt.Errorf("short event of %d bytes: %w", n, unix.EPROTO))
	}
	cq, _ := ch.ctx.lookup(desc.CqHandle).(*CQ)
	return cq, true, nil
}
