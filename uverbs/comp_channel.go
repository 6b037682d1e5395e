package uverbs

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/waitfd"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// CompChannel is a completion channel (ibv_comp_channel): an fd on which
// the CQs bound to it report completion events. Waits for events go
// through Go's netpoller: a waiting goroutine is parked and holds no P.
type CompChannel struct {
	ctx *Context
	fd  *waitfd.FD
	cqs atomic.Pointer[[]*CQ] // the CQs bound to the channel (copied on write)
	mu  sync.Mutex            // serializes writers of cqs
}

// CreateCompChannel creates a completion channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	const op = "create comp channel"
	var req abi.CreateCompChannel
	var resp abi.CreateCompChannelResp
	if err := c.write(op, &abi.WriteCmd{Command: abi.IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
		Req: abi.Bytes(&req), Resp: abi.Bytes(&resp)}); err != nil {
		return nil, err
	}
	fd, err := waitfd.New(int(int32(resp.FD)), "uverbs-comp-channel:"+c.dev.Name)
	if err != nil {
		return nil, wrap(c.dev.Name, op, err)
	}
	ch := &CompChannel{ctx: c, fd: fd}
	ch.cqs.Store(new([]*CQ))
	fd.SetHint(ch.mayHaveEvent, ch.empty)
	return ch, nil
}

// A wait for events need not read before it parks when no CQ bound to
// the channel can have raised an event yet (waitfd.FD.SetHint): every CQ
// is unarmed, or armed once with no completion since. On Soft-RoCE under
// Linux 6.12 that spares most waits a read(2) that would find nothing:
// the completion comes from a workqueue after the waiter sleeps.
const maxHintCQs = 4 // more CQs on one channel: always read first

func (ch *CompChannel) mayHaveEvent() bool {
	cqs := *ch.cqs.Load()
	if len(cqs) > maxHintCQs {
		return true
	}
	for _, cq := range cqs {
		if cq.mayHaveEvent() {
			return true
		}
	}
	return false
}

// empty: nothing is queued, so no CQ has more than the one arm the
// kernel keeps pending.
func (ch *CompChannel) empty() {
	for _, cq := range *ch.cqs.Load() {
		for n := cq.arms.Load(); n > 1 && !cq.arms.CompareAndSwap(n, 1); n = cq.arms.Load() {
		}
	}
}

func (ch *CompChannel) bind(cq *CQ, add bool) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	old := *ch.cqs.Load()
	cqs := make([]*CQ, 0, len(old)+1)
	for _, x := range old {
		if x != cq {
			cqs = append(cqs, x)
		}
	}
	if add {
		cqs = append(cqs, cq)
	}
	ch.cqs.Store(&cqs)
}

// FD is the channel's file descriptor number, for display: it may be
// reused once the channel is closed.
func (ch *CompChannel) FD() int { return ch.fd.Num() }

// GetEvent waits for the next completion event on the channel and returns
// the CQ it names (nil if that CQ was closed since), counting the event
// for the CQ's AckEvents (ibv_get_cq_event). The CQ must be re-armed with
// RequestNotify to report again.
//
// It returns an error matching context.Canceled when ctx is cancelled,
// one matching os.ErrDeadlineExceeded (and context.DeadlineExceeded) when
// ctx's deadline passes, and one matching os.ErrClosed when the channel
// is closed, before or during the wait. Several goroutines may wait at
// once; each event goes to one of them.
//
// An event can be stale: a CQ armed and then polled may already have
// handed over the completion that raised the event. As with
// ibv_get_cq_event, acknowledge it, re-arm, and poll; a poll that then
// finds nothing is normal.
func (ch *CompChannel) GetEvent(ctx context.Context) (*CQ, error) {
	var desc abi.CompEventDesc
	b := abi.Bytes(&desc)
	n, err := ch.fd.Read(ctx, b)
	return ch.event(desc, n, len(b), err)
}

// TryGetEvent is GetEvent without the wait: ok is false when no event is
// queued, and also, at once, while another goroutine waits in GetEvent
// (the event goes to that waiter).
func (ch *CompChannel) TryGetEvent() (cq *CQ, ok bool, err error) {
	var desc abi.CompEventDesc
	b := abi.Bytes(&desc)
	n, ok, err := ch.fd.TryRead(b)
	if !ok && err == nil {
		return nil, false, nil
	}
	cq, err = ch.event(desc, n, len(b), err)
	return cq, err == nil, err
}

func (ch *CompChannel) event(desc abi.CompEventDesc, n, want int, err error) (*CQ, error) {
	const op = "get cq event"
	if err != nil {
		return nil, ch.ctx.wrapCmd(op, err)
	}
	if n != want {
		return nil, wrap(ch.ctx.dev.Name, op, fmt.Errorf("short event of %d bytes: %w", n, unix.EPROTO))
	}
	cq, _ := ch.ctx.lookup(desc.CqHandle).(*CQ)
	if cq != nil {
		cq.events.Add(1)
		for n := cq.arms.Load(); n > 0 && !cq.arms.CompareAndSwap(n, n-1); n = cq.arms.Load() {
		}
	}
	return cq, nil
}

// Close closes the channel's fd and wakes every GetEvent waiting on it.
// The kernel keeps the channel until the CQs bound to it are destroyed.
// Safe to call more than once.
func (ch *CompChannel) Close() error {
	return wrap(ch.ctx.dev.Name, "close comp channel", ch.fd.Close())
}
