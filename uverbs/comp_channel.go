package uverbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/waitfd"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// CompChannel is a completion channel (ibv_comp_channel): an fd on which
// the CQs bound to it report completion events. Waits for events go
// through Go's netpoller: a waiting goroutine is parked and holds no P.
type CompChannel struct {
	ctx     *Context
	fd      *waitfd.FD
	cqs     atomic.Pointer[[]*CQ] // the CQs bound to the channel (copied on write)
	mu      sync.Mutex            // serializes writers of cqs
	readers atomic.Int64          // GetEvent and TryGetEvent calls in flight (comp_hint.go)

	// SetPollTime's budget, and when the last event was read (time since
	// born, plus one: 0 is never), for pollBudget (comp_poll.go).
	pollTime  atomic.Int64
	lastEvent atomic.Int64
	born      time.Time
}

// CreateCompChannel creates a completion channel. The context's Close
// closes it too (the kernel gives its readers EIO from then on).
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	const op = "create comp channel"
	var req abi.CreateCompChannel
	var resp abi.CreateCompChannelResp
	if err := c.write(op, abi.CmdCreateCompChannel.Build(&req, &resp, nil, nil)); err != nil {
		return nil, err
	}
	fd, err := waitfd.New(int(int32(resp.FD)), "uverbs-comp-channel:"+c.dev.Name)
	if err != nil {
		return nil, wrap(c.dev.Name, op, err)
	}
	ch := &CompChannel{ctx: c, fd: fd, born: time.Now()}
	ch.cqs.Store(new([]*CQ))
	fd.SetHint(ch.mayHaveEvent, ch.empty)
	fd.SetPoll(ch.pollBudget)
	if err := c.adoptChannel(op, ch); err != nil {
		fd.Close()
		return nil, err
	}
	return ch, nil
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

// FD is the channel's file descriptor number, for display (the C tools
// print it as the channel's fd). It is valid until Close, after which the
// number may be reused. Never read or poll it: the channel's waits
// (GetEvent and the rest) own the descriptor, and a read of one's own
// would steal their events.
func (ch *CompChannel) FD() int { return ch.fd.Num() }

// GetEvent waits for the next completion event on the channel and returns
// the CQ it names (nil if that CQ was closed since), counting the event
// for the CQ's AckEvents (ibv_get_cq_event). The CQ must be re-armed with
// RequestNotify to report again.
//
// It returns an error matching context.Canceled when ctx is cancelled,
// one matching os.ErrDeadlineExceeded (and context.DeadlineExceeded) when
// ctx's deadline passes, and one matching os.ErrClosed when the channel
// is closed, or its context, before or during the wait. Several
// goroutines may wait at once; each event goes to one of them. With a
// poll time (SetPollTime), a wait soon after an event polls for the next
// before it parks.
//
// An event can be stale: a CQ armed and then polled may already have
// handed over the completion that raised the event. As with
// ibv_get_cq_event, acknowledge it, re-arm, and poll; a poll that then
// finds nothing is normal.
func (ch *CompChannel) GetEvent(ctx context.Context) (*CQ, error) {
	ch.readers.Add(1)
	defer ch.readers.Add(-1)
	var desc abi.CompEventDesc
	b := kabi.Bytes(&desc)
	n, err := ch.fd.Read(ctx, b)
	return ch.event(desc, n, len(b), err)
}

// TryGetEvent is GetEvent without the wait: ok is false when no event is
// queued, and also, at once, while another goroutine waits in GetEvent
// (the event goes to that waiter).
func (ch *CompChannel) TryGetEvent() (cq *CQ, ok bool, err error) {
	ch.readers.Add(1)
	defer ch.readers.Add(-1)
	var desc abi.CompEventDesc
	b := kabi.Bytes(&desc)
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
		// The context's Close marks the kernel's channel closed before
		// this package closes the fd: a wait then sees EPOLLERR ("not
		// pollable") or a read EIO.
		if ch.ctx.isClosed() && !errors.Is(err, os.ErrClosed) && !errors.Is(err, context.Canceled) &&
			!errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("%w: %w", errClosed, err)
		}
		return nil, ch.ctx.wrapCmd(op, err)
	}
	if n != want {
		return nil, wrap(ch.ctx.dev.Name, op, fmt.Errorf("short event of %d bytes: %w", n, unix.EPROTO))
	}
	cq, _ := ch.ctx.lookup(desc.CqHandle).(*CQ)
	if cq != nil {
		cq.events.Add(1)
		cq.hint.countRead()
	}
	ch.sawEvent()
	return cq, nil
}

// Close closes the channel's fd and wakes every GetEvent waiting on it.
// The kernel keeps the channel until the CQs bound to it are destroyed.
// Safe to call more than once, and concurrently.
func (ch *CompChannel) Close() error {
	ch.ctx.unregisterChannel(ch)
	return ch.release()
}

// release closes the fd: Close, and the context's Close.
func (ch *CompChannel) release() error {
	return wrap(ch.ctx.dev.Name, "close comp channel", ch.fd.Close())
}
