package uverbs

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// CQ is a completion queue. It polls and arms through its driver's
// provider (rxe), as ibv_poll_cq and ibv_req_notify_cq do.
type CQ struct {
	object
	userHandle uint64
	cqe        int
	driver     []byte
	channel    *CompChannel
	ops        cqOps         // the provider's; nil on a context without a char device
	polls      atomic.Uint32 // Poll calls but Drain's own (modulo 2^32): tells Drain another goroutine polls
	events     atomic.Uint64 // completion events GetEvent returned
	acked      atomic.Uint64 // of which acknowledged (AckEvents)

	hint    armHint                    // the CQ's part in its channel's wait hint
	drains  atomic.Pointer[[]*drainer] // the Drains waiting for markers on this CQ (copied on write)
	drainMu sync.Mutex                 // serializes writers of drains
}

// CQAttr is what CreateCQ needs.
type CQAttr struct {
	CQE         int          // at least this many entries
	CompVector  int          // completion vector, below NumCompVectors
	CompChannel *CompChannel // nil for none
}

// CreateCQ creates a completion queue and maps it for its driver's data
// path. A device whose driver has no provider gives an error matching
// ErrNoProvider (and ErrNotSupported) that names the driver, before
// anything is sent. A CQ whose context or channel is closed meanwhile
// is not made: the error matches os.ErrClosed.
func (c *Context) CreateCQ(attr CQAttr) (*CQ, error) {
	const op = "create cq"
	if attr.CQE < 1 || attr.CQE > 1<<31-1 || attr.CompVector < 0 {
		return nil, invalid(c.dev.Name, op, "cqe %d or comp vector %d out of range", attr.CQE, attr.CompVector)
	}
	dp, err := c.dataPath(op, "CQ")
	if err != nil {
		return nil, err
	}
	d, err := c.prov.prepareCQ(&attr)
	if err != nil {
		return nil, wrap(c.dev.Name, op, err)
	}
	cq := &CQ{object: object{ctx: c, kind: "cq"}, channel: attr.CompChannel, userHandle: c.newHandle()}
	req := abi.CreateCq{UserHandle: cq.userHandle, Cqe: uint32(attr.CQE), CompVector: uint32(attr.CompVector), CompChannel: -1}
	var resp abi.CreateCqResp
	cq.driver = d.out
	create := func() error {
		return c.write(op, abi.CmdCreateCq.Build(&req, &resp, d.in, d.out))
	}
	if ch := attr.CompChannel; ch != nil {
		// The channel's fd stays open (its number not reused) until the
		// kernel has taken its reference.
		err = ch.fd.Control(func(fd int) error {
			req.CompChannel = int32(fd)
			return create()
		})
		if err != nil {
			err = wrap(c.dev.Name, op, err)
		}
	} else {
		err = create()
	}
	if err != nil {
		d.failed()
		return nil, err
	}
	cq.handle, cq.id, cq.cqe = resp.CqHandle, resp.CqHandle, int(resp.Cqe)
	if dp {
		if cq.ops, err = c.prov.newCQ(cq, d); err != nil {
			err = cq.fail("map", err)
			return nil, errors.Join(err, cq.Close())
		}
	}
	if cq.channel != nil {
		cq.channel.bind(cq, true)
	}
	if err := c.adopt(op, cq.userHandle, cq); err != nil {
		// The context's Close came after the kernel made the CQ: it died
		// with the context, and only the mapping is left to undo.
		return nil, errors.Join(err, cq.Close())
	}
	return cq, nil
}

// CQE is the number of entries the kernel gave the queue.
func (cq *CQ) CQE() int { return cq.cqe }

// Channel is the completion channel the CQ reports to, nil for none.
func (cq *CQ) Channel() *CompChannel { return cq.channel }

// RequestNotify arms the CQ (ibv_req_notify_cq): the next completion
// (with solicitedOnly, the next solicited one) raises an event on its
// completion channel.
func (cq *CQ) RequestNotify(solicitedOnly bool) error {
	if cq.ops == nil {
		return cq.fail("req notify cq", errNoDataPath)
	}
	// Count the arm before it is made, so that a wait never takes the
	// channel for empty while this arm's event may be queued
	// (comp_hint.go).
	cq.hint.arming(cq.ops.produced())
	defer cq.hint.armed()
	return cq.ops.requestNotify(solicitedOnly)
}

// AckEvents acknowledges n events GetEvent returned for this CQ
// (ibv_ack_cq_events).
func (cq *CQ) AckEvents(n int) { cq.acked.Add(uint64(n)) }

// UnackedEvents is how many events GetEvent returned for this CQ that
// were not acknowledged.
func (cq *CQ) UnackedEvents() int { return int(cq.events.Load() - cq.acked.Load()) }

// Close destroys the completion queue and unmaps it. Safe to call more
// than once, and concurrently with any other use: a Poll or
// RequestNotify in flight finishes first, and one after it fails with an
// error matching os.ErrClosed. If the kernel refuses (QPs still use the
// CQ, or one being created names it) the CQ stays usable.
func (cq *CQ) Close() error {
	return cq.destroyAndRelease(quietly(cq.ops, func() error {
		req := abi.DestroyCq{CqHandle: cq.handle}
		var resp abi.DestroyCqResp
		err := cq.ctx.write(fmt.Sprintf("destroy cq %d", cq.handle), abi.CmdDestroyCq.Build(&req, &resp, nil, nil))
		if err == nil {
			cq.ctx.unregister(cq.userHandle)
		}
		return err
	}), cq.release)
}

func (cq *CQ) release() error {
	if cq.channel != nil {
		cq.channel.bind(cq, false)
	}
	if cq.ops == nil {
		return nil
	}
	return cq.ops.release()
}
