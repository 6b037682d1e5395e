package uverbs

// PostSend posts one send work request and rings the doorbell
// (ibv_post_send). Buffers the request names must be registered memory
// outside the Go heap (package uverbs/membuf). It does not allocate.
func (qp *QP) PostSend(wr *SendWR) error {
	switch x := qp.ops.(type) {
	case *rxeQP:
		return x.postSend(wr)
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
	}
	return qp.fail("post send", errNoDataPath)
}

// PostRecv posts one receive work request (ibv_post_recv). A QP with an
// SRQ has no receive queue: post to the SRQ. It does not allocate.
func (qp *QP) PostRecv(wr *RecvWR) error {
	switch x := qp.ops.(type) {
	case *rxeQP:
		return x.postRecv(wr)
	}
	return qp.fail("post recv", errNoDataPath)
}

// MaxInline is the most inline data (SendInline) one send work request
// can carry: what the kernel granted, within the queue's element size.
func (qp *QP) MaxInline() int {
	if qp.ops == nil {
		return int(qp.cap.MaxInlineData)
	}
	return qp.ops.maxInline()
}

// PostRecv posts one receive work request to the SRQ (ibv_post_srq_recv).
// It does not allocate.
func (s *SRQ) PostRecv(wr *RecvWR) error {
	switch x := s.ops.(type) {
	case *rxeSRQ:
		return x.postRecv(wr)
	}
	return s.fail("post srq recv", errNoDataPath)
}
