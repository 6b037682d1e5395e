package uverbs

// The hot verbs' one dispatch place: each switches on the provider's
// concrete object (provider.go says why not an interface), and the
// checks every provider shares run here or are called from here.

import "github.com/rdmastack/rdmastack/ib"

// PostSend posts one send work request and rings the doorbell
// (ibv_post_send). Buffers the request names must be registered memory
// outside the Go heap (package uverbs/membuf). It does not allocate.
func (qp *QP) PostSend(wr *SendWR) error { return qp.postSend(wr, false) }

// postSend is PostSend; marker is set for Drain's own send.
func (qp *QP) postSend(wr *SendWR, marker bool) error {
	switch x := qp.ops.(type) {
	case *rxeQP:
		return x.post(wr, marker)
	case *siwQP:
		return x.post(wr)
	}
	return qp.fail("post send", errNoDataPath)
}

// PostSendList posts the work requests in order and rings the doorbell
// once. On an error the requests before the failing one are posted (the
// doorbell is rung for them) and the error says which failed.
func (qp *QP) PostSendList(wrs []SendWR) error {
	switch x := qp.ops.(type) {
	case *rxeQP:
		return x.postSendList(wrs)
	case *siwQP:
		return x.postSendList(wrs)
	}
	return qp.fail("post send", errNoDataPath)
}

// PostRecv posts one receive work request (ibv_post_recv). A QP with an
// SRQ has no receive queue: post to the SRQ. It does not allocate.
func (qp *QP) PostRecv(wr *RecvWR) error {
	if qp.srq != nil {
		return qp.invalid("post recv", "the QP receives through an SRQ")
	}
	if len(wr.SGE) > int(qp.cap.MaxRecvSGE) {
		return qp.invalid("post recv", "%d SGEs, at most %d", len(wr.SGE), qp.cap.MaxRecvSGE)
	}
	switch x := qp.ops.(type) {
	case *rxeQP:
		return x.postRecv(wr)
	case *siwQP:
		return x.postRecv(wr)
	}
	return qp.fail("post recv", errNoDataPath)
}

// PostRecv posts one receive work request to the SRQ (ibv_post_srq_recv).
// It does not allocate.
func (s *SRQ) PostRecv(wr *RecvWR) error {
	if len(wr.SGE) > int(s.maxSGE) {
		return s.invalid("post srq recv", "%d SGEs, at most %d", len(wr.SGE), s.maxSGE)
	}
	switch x := s.ops.(type) {
	case *rxeSRQ:
		return x.postRecv(wr)
	case *siwSRQ:
		return x.postRecv(wr)
	}
	return s.fail("post srq recv", errNoDataPath)
}

// Poll reads up to len(wc) completions into wc and returns how many
// (ibv_poll_cq). It does not allocate.
func (cq *CQ) Poll(wc []WC) (int, error) {
	cq.polls.Add(1)
	return cq.pollAs(wc)
}

// pollAs is Poll without counting the call (Drain's own polls). A
// completion of a marker that a Drain waits for goes to that Drain, not
// into wc, whoever polls (qp_drain.go).
func (cq *CQ) pollAs(wc []WC) (int, error) {
	n := 0
	for n < len(wc) {
		var got int
		var err error
		switch x := cq.ops.(type) {
		case *rxeCQ:
			got, err = x.poll(wc[n:])
		case *siwCQ:
			got, err = x.poll(wc[n:])
		default:
			return 0, cq.fail("poll cq", errNoDataPath)
		}
		if err != nil {
			return n, err
		}
		kept := cq.keepApplication(wc[n : n+got])
		n += kept
		if kept == got {
			// No marker taken: the provider filled what it had.
			break
		}
	}
	return n, nil
}

// keepApplication moves Drain's markers out of ws, a batch of
// completions just polled, and returns how many are left at its front.
func (cq *CQ) keepApplication(ws []WC) int {
	drains := cq.drains.Load()
	if drains == nil {
		return len(ws)
	}
	kept := 0
	for i := range ws {
		if ws[i].ID|1 == DrainWRID|1 && takeMarker(*drains, &ws[i]) {
			continue
		}
		if kept != i {
			ws[kept] = ws[i]
		}
		kept++
	}
	return kept
}

// checkSend refuses a send work request that no provider may post to
// this QP, before anything is written: what the QP's type, its sizes or
// the device's transport do not allow. Providers call it first, under
// their send queue's lock, with the most inline bytes and SGEs their
// elements hold. It allocates only when it refuses.
func (qp *QP) checkSend(wr *SendWR, maxInline, maxSGE int) error {
	const op = "post send"
	if len(wr.SGE) > int(qp.cap.MaxSendSGE) {
		return qp.invalid(op, "%d SGEs, the QP has %d", len(wr.SGE), qp.cap.MaxSendSGE)
	}
	length := uint64(len(wr.Inline))
	for i := range wr.SGE {
		length += uint64(wr.SGE[i].Length)
	}
	inline := wr.Flags&SendInline != 0 || len(wr.Inline) != 0
	switch {
	case len(wr.Inline) != 0 && len(wr.SGE) != 0:
		return qp.invalid(op, "%d inline bytes and %d SGEs: the data is one or the other", len(wr.Inline), len(wr.SGE))
	case wr.Opcode > OpSendWithInv:
		return qp.invalid(op, "opcode %v", wr.Opcode)
	case qp.ctx.prov.traits().iwarp && !wr.Opcode.onIWARP():
		return qp.ctx.unsupported(op, wr.Opcode.String())
	case qp.ctx.prov.traits().iwarp && wr.Opcode == OpRDMARead && len(wr.SGE) > 1:
		return qp.invalid(op, "an iWARP READ's sink has one SGE, not %d", len(wr.SGE))
	case qp.typ == ib.QPTypeUD && wr.Opcode != OpSend && wr.Opcode != OpSendWithImm:
		return qp.invalid(op, "%v on a UD QP", wr.Opcode)
	case wr.Opcode == OpBindMW && (wr.MW == nil || len(wr.SGE) != 0 || inline):
		return qp.invalid(op, "a bind names a window and no data")
	case wr.Opcode == OpLocalInv && (len(wr.SGE) != 0 || inline):
		return qp.invalid(op, "an invalidation carries no data")
	case qp.typ == ib.QPTypeUC && (wr.Opcode == OpRDMARead || wr.Opcode.atomic()):
		return qp.invalid(op, "%v on a UC QP", wr.Opcode)
	case wr.Opcode.atomic() && (length < 8 || wr.RemoteAddr&7 != 0):
		return qp.invalid(op, "atomic of %d bytes at %#x (needs 8 bytes, 8-aligned)", length, wr.RemoteAddr)
	case inline && (length > uint64(maxInline) || wr.Opcode == OpRDMARead || wr.Opcode.atomic()):
		return qp.invalid(op, "%d bytes inline with %v (at most %d)", length, wr.Opcode, maxInline)
	case !inline && len(wr.SGE) > maxSGE:
		return qp.invalid(op, "%d SGEs do not fit the queue's elements", len(wr.SGE))
	case length > 1<<31:
		return qp.invalid(op, "%d bytes", length)
	}
	return nil
}

// MaxInline is the most inline data (SendWR.Inline, or SendInline with
// SGEs) one send work request can carry: what the kernel granted, within the queue's element size.
func (qp *QP) MaxInline() int {
	if qp.ops == nil {
		return int(qp.cap.MaxInlineData)
	}
	return qp.ops.maxInline()
}
