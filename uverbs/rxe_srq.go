package uverbs

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// rxeSRQ is an rxe shared receive queue's mapped queue.
type rxeSRQ struct {
	srq    *SRQ
	mu     sync.Mutex
	q      queue
	closed bool
}

func (rxeProvider) newSRQ(srq *SRQ, _ driverIO) (srqOps, error) {
	q, err := rxeSRQQueue(srq)
	if err != nil {
		return nil, err
	}
	return &rxeSRQ{srq: srq, q: q}, nil
}

// rxeSRQQueue maps the queue the SRQ's driver data names (struct
// rxe_create_srq_resp, whose mminfo a resize rewrites).
func rxeSRQQueue(srq *SRQ) (queue, error) {
	if len(srq.driver) < kabi.Sizeof[abi.RxeCreateSrqResp]() {
		return queue{}, fmt.Errorf("driver response of %d bytes: %w", len(srq.driver), unix.EPROTO)
	}
	q, err := mapRxeQueue(srq.ctx, "srq", kabi.Decode[abi.RxeCreateSrqResp](srq.driver).Mi)
	if err != nil {
		return queue{}, err
	}
	if q.elemSize() < recvWqeHdr {
		q.unmap()
		return queue{}, fmt.Errorf("elements too small: %w", unix.EPROTO)
	}
	return q, nil
}

func (x *rxeSRQ) resized() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return x.srq.closedErr("resize srq")
	}
	return x.q.replace(rxeSRQQueue(x.srq))
}

func (x *rxeSRQ) postRecv(wr *RecvWR) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return x.srq.closedErr("post srq recv")
	}
	return postRxeRecv(&x.q, wr, int(x.srq.maxSGE), &x.srq.object)
}

func (x *rxeSRQ) release() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	return x.q.unmap()
}
