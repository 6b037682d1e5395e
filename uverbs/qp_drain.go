package uverbs

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/waitfd"
)

// DrainWRID and DrainWRID+1 are the work request IDs of the send and
// receive markers Drain posts; other work requests should not use them.
const DrainWRID = 0xffff_ffff_ffff_d4a0

// Drain moves the QP to the error state and waits until every work
// request posted to it has completed, as the kernel's ib_drain_qp does:
// it posts a marker receive (without an SRQ) and a marker send and polls
// the QP's CQs until both markers have flushed. A QP in RESET has nothing
// to drain. The completions it
// finds on the way, those of this QP and of others sharing its CQs, go to
// handle (nil drops them); the markers do not. Each queue needs room for
// one more work request. A QP with an SRQ drains its send queue only:
// its receives belong to the SRQ.
//
// Drain polls, sleeping between polls (from 20 µs up to 1 ms), so that
// it neither spins a CPU nor takes events a CQ's owner waits for. It
// returns ctx's error, matching context.Canceled or
// os.ErrDeadlineExceeded, if ctx ends first; the QP is then in the error
// state and the markers may still come.
func (qp *QP) Drain(ctx context.Context, handle func(WC)) error {
	const op = "drain"
	a, err := qp.Query(QPAttrState)
	if err != nil {
		return err
	}
	if a.State == ib.QPStateReset {
		return nil // nothing can be posted to a QP in RESET
	}
	sendDone, recvDone := false, qp.srq != nil
	// The receive marker goes in before the move to ERR: rxe flushes a
	// user QP's receive queue when the QP enters the error state, not
	// when a receive is posted later (user space posts receives without
	// a system call). If a message arrives first, it lands in the marker
	// (zero bytes: a length error on that message), and the flush still
	// ends with it.
	if !recvDone {
		if err := qp.PostRecv(&RecvWR{ID: DrainWRID + 1}); err != nil {
			return err
		}
	}
	if a.State != ib.QPStateErr {
		if err := qp.Modify(&QPAttr{State: ib.QPStateErr}, QPAttrState); err != nil {
			return err
		}
	}
	switch x := qp.ops.(type) {
	case *rxeQP:
		err = x.postDrainMarker()
	default:
		err = qp.fail("post send", errNoDataPath)
	}
	if err != nil {
		return err
	}
	var wc [16]WC
	poll := func(cq *CQ) error {
		n, err := cq.Poll(wc[:])
		if err != nil {
			return err
		}
		for _, w := range wc[:n] {
			switch {
			case w.ID == DrainWRID && w.QPNum == qp.num:
				sendDone = true
			case w.ID == DrainWRID+1 && w.QPNum == qp.num:
				recvDone = true
			case handle != nil:
				handle(w)
			}
		}
		return nil
	}
	for pause := 20 * time.Microsecond; ; pause = min(2*pause, time.Millisecond) {
		if err := poll(qp.sendCQ); err != nil {
			return err
		}
		if qp.recvCQ != qp.sendCQ {
			if err := poll(qp.recvCQ); err != nil {
				return err
			}
		}
		if sendDone && recvDone {
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return qp.fail(op, fmt.Errorf("send marker flushed: %v, receive marker: %v: %w",
				sendDone, recvDone, waitfd.ContextError(ctx.Err())))
		case <-t.C:
		}
	}
}
